// A C host of an amp-compile object (test/Tools/amp-compile/batch-checks.test):
// it checks a batch with `_mlir_ciface_train_step__amp_checks` before it would
// run the step, and names the check that fails from
// `train_step__amp_check_messages`. The step is
// test/Integration/Inputs/out_of_range_ids_step.mlir after amp-pipeline: a
// table of 4 x 3, 8 token ids, the seed, then the loss-scale state (scale,
// growth tracker, overflow flag).
#include <stdint.h>
#include <stdio.h>

typedef struct { float *allocated, *aligned; int64_t offset, sizes[2], strides[2]; } F2;
typedef struct { int32_t *allocated, *aligned; int64_t offset, sizes[1], strides[1]; } I1;
typedef struct { void *allocated, *aligned; int64_t offset; } S0;

int32_t _mlir_ciface_train_step__amp_checks(F2 *table, I1 *ids, S0 *seed, S0 *scale, S0 *growth,
                                            S0 *overflow);
extern const char *const train_step__amp_check_messages[];

static int32_t check(int32_t last_id) {
  float table[12] = {0}, one = 1.0f, scaleValue = 65536.0f;
  int32_t ids[8] = {0, 1, 2, 3, 3, 2, 1, last_id}, growth = 0, overflow = 0;
  F2 t = {table, table, 0, {4, 3}, {3, 1}};
  I1 i = {ids, ids, 0, {8}, {1}};
  S0 s = {&one, &one, 0}, sc = {&scaleValue, &scaleValue, 0}, g = {&growth, &growth, 0},
     o = {&overflow, &overflow, 0};
  return _mlir_ciface_train_step__amp_checks(&t, &i, &s, &sc, &g, &o);
}

int main(void) {
  for (int32_t last = 3; last <= 4; ++last) {
    int32_t code = check(last);
    printf("last id %d: %d", last, code);
    if (code)
      printf(" %s", train_step__amp_check_messages[code - 1]);
    printf("\n");
  }
  int n = 0;
  while (train_step__amp_check_messages[n])
    ++n;
  printf("%d checks\n", n);
  return 0;
}
