/* Plans and runs a 3-tap conv1d through an installed fastconv; exit 0 if the result is right. */
#include <stdio.h>

#include <fastconv.h>

int main(void) {
    const float x[4] = {1, 2, 3, 4}, k[3] = {1, 1, 1};
    float y[6];
    fconv_conv1d_desc d = {.n = 4, .m = 3, .mode = FCONV_MODE_FULL};
    fconv_plan *plan;
    if (fconv_plan_conv1d(&d, NULL, k, &plan) != FCONV_OK) {
        fprintf(stderr, "%s\n", fconv_last_error());
        return 1;
    }
    fconv_status st = fconv_execute(plan, x, NULL, NULL, y);
    fconv_plan_destroy(plan);
    const float want[6] = {1, 3, 6, 9, 7, 4};
    for (int i = 0; i < 6; i++)
        if (st != FCONV_OK || y[i] < want[i] - 1e-5f || y[i] > want[i] + 1e-5f) return 1;
    printf("fastconv %s ok\n", fconv_version());
    return 0;
}
