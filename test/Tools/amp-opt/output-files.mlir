// A run is all or nothing: the output (-o) and the autocast report are
// written to temporary files and renamed into place only when the whole run
// succeeded. A failed run leaves existing files as they were and no
// temporary file behind (it used to delete the -o file and to write the
// report of a run that then failed).

// RUN: rm -rf %t && mkdir -p %t
// RUN: echo OLD-OUTPUT > %t/out.mlir
// RUN: echo OLD-REPORT > %t/report.json
// amp-autocast succeeds, then amp-loss-scaling fails (no training step).
// RUN: not amp-opt %s --amp-autocast=report=%t/report.json --amp-loss-scaling -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: FileCheck %s --check-prefix=OLDOUT --input-file=%t/out.mlir
// RUN: FileCheck %s --check-prefix=OLDREPORT --input-file=%t/report.json
// RUN: ls %t | count 2
// A successful run replaces both.
// RUN: amp-opt %s --amp-autocast=report=%t/report.json -o %t/out.mlir
// RUN: FileCheck %s --check-prefix=NEWOUT --input-file=%t/out.mlir
// RUN: FileCheck %s --check-prefix=NEWREPORT --input-file=%t/report.json
// RUN: ls %t | count 2
// A failing pipeline writes no report where there was none.
// RUN: not amp-opt %s --amp-autocast=report=%t/other.json --amp-loss-scaling -o %t/out.mlir
// RUN: test ! -e %t/other.json

// Errors that belong to no line of the input name the option or file.
// RUN: not amp-opt %s -o %t/missing/out.mlir 2>&1 | FileCheck %s --check-prefix=NODIR
// RUN: not amp-opt %s --amp-autocast=report=%t/missing/r.json -o %t/out2.mlir 2>&1 | FileCheck %s --check-prefix=NOREPORTDIR
// RUN: test ! -e %t/out2.mlir
// RUN: not amp-opt %s "--amp-autocast=policy=%t/a b.yaml" 2>&1 | FileCheck %s --check-prefix=SPACE
// RUN: not amp-opt %s "--amp-pipeline=policy=%t/a b.yaml" 2>&1 | FileCheck %s --check-prefix=SPACE-PIPELINE
// RUN: not amp-opt %s --amp-pipeline=bogus=1 2>&1 | FileCheck %s --check-prefix=PIPELINE-OPTION
// Quoted inside the option string, a path with a space works.
// RUN: mkdir -p "%t/a dir"
// RUN: cp %S/../../Policy/Inputs/valid.yaml "%t/a dir/p.yaml"
// RUN: amp-opt %s "--amp-autocast=policy='%t/a dir/p.yaml'" -o /dev/null
// RUN: amp-opt %s "--amp-pipeline=policy='%t/a dir/p.yaml' loss-scaling=none" -o /dev/null

// FAIL: error: amp-loss-scaling found no training step
// OLDOUT: OLD-OUTPUT
// OLDREPORT: OLD-REPORT
// NEWOUT: func.func @f(
// NEWREPORT: "pass": "amp-autocast"
// NODIR: amp-opt: error: -o '{{.*}}missing{{/|\\}}out.mlir': folder '{{.*}}missing' does not exist
// NOREPORTDIR: output-files.mlir:0:0: error: amp-autocast: cannot write report='{{.*}}missing{{/|\\}}r.json': No such file or directory
// SPACE: amp-opt: error: --amp-autocast='policy={{.*}}a b.yaml': no such option b.yaml (a value with spaces must be quoted inside the option string: name='a value')
// SPACE-NOT: <unknown>
// SPACE-PIPELINE: amp-opt: error: --amp-pipeline='policy={{.*}}a b.yaml': no such option b.yaml
// PIPELINE-OPTION: amp-opt: error: --amp-pipeline='bogus=1': no such option bogus

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
