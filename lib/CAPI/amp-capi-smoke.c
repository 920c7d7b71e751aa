/*===- amp-capi-smoke.c - the C API used from C ---------------------------===*\
|*                                                                            *|
|* Compiled as C99 against include/amp-c/AmpMLIR.h only, to keep the API free *|
|* of C++: runs amp-pipeline on a training step, then trains it like          *|
|* `amp-train STEP --precision=f16 --steps N` and prints the same JSON lines. *|
|*                                                                            *|
|*   amp-capi-smoke STEP.mlir [STEPS]                                         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "amp-c/AmpMLIR.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *readFile(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  if (text && fread(text, 1, (size_t)size, file) != (size_t)size) {
    free(text);
    text = NULL;
  }
  if (text)
    text[size] = '\0';
  fclose(file);
  return text;
}

static void printNumber(float value) {
  if (isfinite(value))
    printf("%.9g", (double)value);
  else
    printf("null");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: amp-capi-smoke STEP.mlir [STEPS]\n");
    return 2;
  }
  int steps = argc > 2 ? atoi(argv[2]) : 5;
  char *ir = readFile(argv[1]);
  if (!ir) {
    fprintf(stderr, "amp-capi-smoke: cannot read %s\n", argv[1]);
    return 1;
  }

  // The option names, from the library's tables.
  static const char *const enums[] = {"precision", "loss-scaling", "lowering",
                                      "device"};
  for (int which = 0; which < 4; ++which) {
    fprintf(stderr, "%s:", enums[which]);
    for (int value = 0; ampEnumGetValueName((AmpEnum)which, value); ++value)
      fprintf(stderr, " %s=%d", ampEnumGetValueName((AmpEnum)which, value),
              ampEnumLookupValue((AmpEnum)which,
                                 ampEnumGetValueName((AmpEnum)which, value)));
    fprintf(stderr, "\n");
  }

  char *output = NULL, *error = NULL;
  if (ampRunPipeline(ir, "builtin.module(amp-pipeline{precision=f16})", argv[1],
                     0, &output, &error) != AMP_SUCCESS) {
    fprintf(stderr, "%s\n", error);
    ampFree(error);
    return 1;
  }
  fprintf(stderr, "amp-pipeline: %zu bytes of IR\n", strlen(output));
  ampFree(output);

  AmpTrainerOptions options;
  ampTrainerOptionsInit(&options);
  AmpTrainer *trainer = ampTrainerCreate(ir, argv[1], &options, &error);
  free(ir);
  if (!trainer || ampTrainerInitialize(trainer, NULL, &error) != AMP_SUCCESS) {
    fprintf(stderr, "%s\n", error);
    ampFree(error);
    ampTrainerDestroy(trainer);
    return 1;
  }
  for (size_t i = 0; i < ampTrainerGetNumArguments(trainer); ++i) {
    AmpArgumentInfo info;
    ampTrainerGetArgumentInfo(trainer, i, &info);
    fprintf(stderr, "argument %zu: %s %s init \"%s\"\n", i, info.name,
            info.type, info.init);
  }
  for (int k = 0; k < steps; ++k) {
    AmpStepResult result;
    if (ampTrainerStep(trainer, 0, &result, &error) != AMP_SUCCESS) {
      fprintf(stderr, "%s\n", error);
      ampFree(error);
      ampTrainerDestroy(trainer);
      return 1;
    }
    printf("{\"step\": %d, \"loss\": ", k);
    printNumber(result.loss);
    printf(", \"scale\": ");
    printNumber(result.scale);
    printf(", \"skipped\": %s}\n", result.skipped ? "true" : "false");
  }
  ampTrainerDestroy(trainer);
  return 0;
}
