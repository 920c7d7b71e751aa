//===- AmpMLIRModule.cpp - the _amp_mlir_native Python module -------------===//
//
// A thin nanobind layer over the C API (include/amp-c/AmpMLIR.h): no MLIR or
// LLVM type reaches this file, so the module is compiled with exceptions and
// RTTI whatever the flags of the MLIR libraries behind AmpCAPI. Failures of
// the C API become `MLIRError` (a RuntimeError) carrying the located MLIR
// diagnostics; misuse (bad index, dtype, shape) becomes ValueError/TypeError.
// The GIL is released while MLIR parses, compiles or runs a step.
//
// The friendly API (amp_mlir.run_pipeline, amp_mlir.Trainer) is written in
// Python on top of this module (python/amp_mlir/__init__.py, _trainer.py).
//
//===----------------------------------------------------------------------===//

#include "amp-c/AmpMLIR.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

/// A failure reported by the C API: MLIR diagnostics with their locations.
class MLIRError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Takes ownership of a C API error string and throws it as MLIRError.
[[noreturn]] void throwError(char *error, const char *fallback) {
  std::string message = error ? error : fallback;
  ampFree(error);
  throw MLIRError(message);
}

/// The AmpDType of a numpy (DLPack) dtype; -1 when the C API has none.
int toAmpDType(nb::dlpack::dtype dtype) {
  using Code = nb::dlpack::dtype_code;
  if (dtype.lanes != 1)
    return -1;
  if (dtype.code == static_cast<uint8_t>(Code::Float) && dtype.bits == 32)
    return AMP_DTYPE_FLOAT32;
  if (dtype.code == static_cast<uint8_t>(Code::Int) && dtype.bits == 32)
    return AMP_DTYPE_INT32;
  if (dtype.code == static_cast<uint8_t>(Code::Int) && dtype.bits == 64)
    return AMP_DTYPE_INT64;
  if (dtype.code == static_cast<uint8_t>(Code::Bool) && dtype.bits == 8)
    return AMP_DTYPE_BOOL;
  return -1;
}

nb::dlpack::dtype fromAmpDType(AmpDType dtype) {
  using Code = nb::dlpack::dtype_code;
  switch (dtype) {
  case AMP_DTYPE_FLOAT32:
    return {static_cast<uint8_t>(Code::Float), 32, 1};
  case AMP_DTYPE_INT32:
    return {static_cast<uint8_t>(Code::Int), 32, 1};
  case AMP_DTYPE_INT64:
    return {static_cast<uint8_t>(Code::Int), 64, 1};
  case AMP_DTYPE_BOOL:
    return {static_cast<uint8_t>(Code::Bool), 8, 1};
  }
  return {static_cast<uint8_t>(Code::Float), 32, 1};
}

/// The C API takes NUL-terminated strings: a NUL inside one would cut it
/// there silently.
void rejectNul(const std::string &text, const char *what) {
  size_t at = text.find('\0');
  if (at != std::string::npos)
    throw nb::value_error((std::string(what) + " holds a NUL character at offset " +
                           std::to_string(at) +
                           ": MLIR text and names cannot contain one")
                              .c_str());
}

std::string runPipeline(const std::string &ir, const std::string &pipeline,
                        const std::string &sourceName, bool printLocations) {
  rejectNul(ir, "the IR");
  rejectNul(pipeline, "the pipeline");
  rejectNul(sourceName, "the source name");
  char *output = nullptr;
  char *error = nullptr;
  AmpStatus status;
  {
    nb::gil_scoped_release release;
    status = ampRunPipeline(ir.c_str(), pipeline.c_str(), sourceName.c_str(),
                            printLocations ? 1 : 0, &output, &error);
  }
  if (status != AMP_SUCCESS)
    throwError(error, "the pass pipeline failed");
  std::string text = output ? output : "";
  ampFree(output);
  return text;
}

/// The Python spelling of an option name ("init-scale": "init_scale").
std::string getPythonName(const char *argument) {
  std::string name = argument;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

/// The loss-scaling rules (amp/Config/LossScalingRules.def) and their
/// defaults, by Python name: the keyword arguments of amp_mlir.Trainer.
std::map<std::string, nb::object> getLossScalingRules() {
  AmpTrainerOptions defaults;
  ampTrainerOptionsInit(&defaults);
  std::map<std::string, nb::object> rules;
#define AMP_LOSS_SCALING_RULE(field, argument, type, description)             \
  rules[getPythonName(argument)] = nb::cast(defaults.field);
#include "amp/Config/LossScalingRules.def"
  return rules;
}

/// The names of every C enum with command-line names (AmpEnum), from the
/// library's own tables: {"precision": {"fp32": 0, ...}, "loss_scaling": ...,
/// "lowering": ..., "device": ...}.
std::map<std::string, std::map<std::string, int>> getEnumValues() {
  std::map<std::string, std::map<std::string, int>> tables;
  for (auto [which, key] : {std::pair{AMP_ENUM_PRECISION, "precision"},
                            std::pair{AMP_ENUM_LOSS_SCALING, "loss_scaling"},
                            std::pair{AMP_ENUM_LOWERING, "lowering"},
                            std::pair{AMP_ENUM_DEVICE, "device"}}) {
    std::map<std::string, int> &table = tables[key];
    for (int value = 0; const char *name = ampEnumGetValueName(which, value);
         ++value)
      table[name] = value;
  }
  return tables;
}

/// Sets the rules named in `rules` (a dict by Python name); an unknown name
/// is a TypeError.
void setLossScalingRules(AmpTrainerOptions &options, const nb::dict &rules) {
  size_t known = 0;
#define AMP_LOSS_SCALING_RULE(field, argument, type, description)             \
  if (std::string name = getPythonName(argument); rules.contains(name.c_str())) {  \
    options.field = nb::cast<type>(rules[name.c_str()]);                       \
    ++known;                                                                   \
  }
#include "amp/Config/LossScalingRules.def"
  if (known != rules.size())
    throw nb::type_error("unknown loss-scaling rule (see loss_scaling_rules())");
}

/// An AmpTrainer handle.
class Trainer {
public:
  Trainer(const std::string &ir, const std::string &sourceName, int precision,
          int lossScaling, const nb::dict &rules, const std::string &policyPath,
          uint64_t seed, const std::string &entry, unsigned optLevel,
          int lowering, int device, bool nativeBf16) {
    rejectNul(ir, "the IR");
    rejectNul(sourceName, "the source name");
    rejectNul(policyPath, "the policy path");
    rejectNul(entry, "the entry name");
    AmpTrainerOptions options;
    ampTrainerOptionsInit(&options);
    options.precision = static_cast<AmpPrecision>(precision);
    options.lossScaling = static_cast<AmpLossScaling>(lossScaling);
    setLossScalingRules(options, rules);
    options.policyPath = policyPath.c_str();
    options.seed = seed;
    options.entry = entry.c_str();
    options.optLevel = optLevel;
    options.lowering = static_cast<AmpLowering>(lowering);
    options.device = static_cast<AmpDevice>(device);
    options.nativeBf16 = nativeBf16;
    char *error = nullptr;
    {
      nb::gil_scoped_release release;
      handle = ampTrainerCreate(ir.c_str(), sourceName.c_str(), &options,
                                &error);
    }
    if (!handle)
      throwError(error, "cannot create the trainer");
  }
  ~Trainer() { ampTrainerDestroy(handle); }
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;

  void initialize(const std::string &inputsDir) {
    rejectNul(inputsDir, "the inputs directory");
    char *error = nullptr;
    AmpStatus status;
    {
      nb::gil_scoped_release release;
      status = ampTrainerInitialize(handle, inputsDir.c_str(), &error);
    }
    if (status != AMP_SUCCESS)
      throwError(error, "cannot initialise the arguments");
  }

  std::tuple<float, float, bool> step(bool poison) {
    AmpStepResult result;
    char *error = nullptr;
    AmpStatus status;
    {
      nb::gil_scoped_release release;
      status = ampTrainerStep(handle, poison ? 1 : 0, &result, &error);
    }
    if (status != AMP_SUCCESS)
      throwError(error, "the step failed");
    return {result.loss, result.scale, result.skipped != 0};
  }

  std::string entryName() const { return ampTrainerGetEntryName(handle); }
  bool isLossScaled() const { return ampTrainerIsLossScaled(handle) != 0; }
  std::optional<std::string> autocastReport() const {
    const char *json = ampTrainerGetAutocastReport(handle);
    return json ? std::optional<std::string>(json) : std::nullopt;
  }
  size_t numArguments() const { return ampTrainerGetNumArguments(handle); }
  size_t numOriginalArguments() const {
    return ampTrainerGetNumOriginalArguments(handle);
  }

  AmpArgumentInfo info(size_t index) const {
    AmpArgumentInfo info;
    if (ampTrainerGetArgumentInfo(handle, index, &info) != AMP_SUCCESS)
      throw nb::index_error(("argument index " + std::to_string(index) +
                             " out of range (the step has " +
                             std::to_string(numArguments()) + " arguments)")
                                .c_str());
    return info;
  }

  nb::dict argumentInfo(size_t index) const {
    AmpArgumentInfo i = info(index);
    nb::dict d;
    d["index"] = index;
    d["name"] = i.name;
    d["type"] = i.type;
    d["init"] = i.init;
    d["dtype"] = ampDTypeGetName(i.dtype);
    d["shape"] = nb::tuple(nb::cast(std::vector<int64_t>(i.shape, i.shape + i.rank)));
    d["updated_by"] = i.updatedBy;
    d["is_scale_state"] = i.isScaleState != 0;
    return d;
  }

  void setArgument(size_t index,
                   nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu> array) {
    AmpArgumentInfo i = info(index);
    int dtype = toAmpDType(array.dtype());
    if (dtype < 0)
      throw nb::type_error(
          ("argument #" + std::to_string(index) + " '" + i.name + "' (" +
           i.type + "): unsupported array dtype; use float32, int32, int64 "
                    "or bool (expected " + ampDTypeGetName(i.dtype) + ")")
              .c_str());
    std::vector<int64_t> shape(array.ndim());
    for (size_t d = 0; d < array.ndim(); ++d)
      shape[d] = static_cast<int64_t>(array.shape(d));
    char *error = nullptr;
    if (ampTrainerSetArgument(handle, index, static_cast<AmpDType>(dtype),
                              shape.data(), shape.size(), array.data(),
                              array.nbytes(), &error) != AMP_SUCCESS) {
      std::string message = error ? error : "cannot set the argument";
      ampFree(error);
      throw nb::value_error(message.c_str());
    }
  }

  nb::ndarray<nb::numpy> getArgument(size_t index) const {
    AmpArgumentInfo i = info(index);
    size_t bytes = i.numBytes;
    auto *buffer = new uint8_t[bytes ? bytes : 1];
    nb::capsule owner(buffer, [](void *p) noexcept {
      delete[] static_cast<uint8_t *>(p);
    });
    char *error = nullptr;
    if (ampTrainerGetArgument(handle, index, buffer, bytes, &error) !=
        AMP_SUCCESS)
      throwError(error, "cannot read the argument");
    std::vector<size_t> shape(i.shape, i.shape + i.rank);
    return nb::ndarray<nb::numpy>(buffer, shape.size(), shape.data(), owner,
                                  /*strides=*/nullptr, fromAmpDType(i.dtype));
  }

  void dump(const std::string &dir) {
    rejectNul(dir, "the directory");
    char *error = nullptr;
    if (ampTrainerDump(handle, dir.c_str(), &error) != AMP_SUCCESS)
      throwError(error, "cannot dump the arguments");
  }

private:
  AmpTrainer *handle = nullptr;
};

} // namespace

NB_MODULE(_amp_mlir_native, m) {
  m.doc() = "Native layer of amp_mlir over the amp-mlir C API (use the "
            "amp_mlir package, not this module).";
  nb::exception<MLIRError>(m, "MLIRError", PyExc_RuntimeError);
  m.attr("__version__") = ampGetVersion();

  m.def("run_pipeline", &runPipeline, nb::arg("ir"), nb::arg("pipeline"),
        nb::arg("source_name") = "<input>", nb::arg("print_locations") = false,
        "Parse `ir`, run the textual pass pipeline, return the printed IR.");

  m.def("loss_scaling_rules", &getLossScalingRules,
        "The loss-scaling rules (keyword arguments of amp_mlir.Trainer) and "
        "their defaults, those of amp-loss-scaling.");

  m.def("enum_values", &getEnumValues,
        "The names of the trainer's enum options (precision, loss_scaling, "
        "lowering, device) and their values, amp-train's spellings.");

  nb::class_<Trainer>(m, "Trainer")
      .def(nb::init<const std::string &, const std::string &, int, int,
                    const nb::dict &, const std::string &, uint64_t,
                    const std::string &, unsigned, int, int, bool>(),
           nb::arg("ir"), nb::arg("source_name"), nb::arg("precision"),
           nb::arg("loss_scaling"), nb::arg("rules"), nb::arg("policy"),
           nb::arg("seed"), nb::arg("entry"), nb::arg("opt_level"),
           nb::arg("lowering"), nb::arg("device"), nb::arg("native_bf16"))
      .def("initialize", &Trainer::initialize, nb::arg("inputs_dir"))
      .def("step", &Trainer::step, nb::arg("poison") = false)
      .def_prop_ro("entry_name", &Trainer::entryName)
      .def_prop_ro("is_loss_scaled", &Trainer::isLossScaled)
      .def_prop_ro("autocast_report", &Trainer::autocastReport)
      .def_prop_ro("num_arguments", &Trainer::numArguments)
      .def_prop_ro("num_original_arguments", &Trainer::numOriginalArguments)
      .def("argument_info", &Trainer::argumentInfo, nb::arg("index"))
      .def("set_argument", &Trainer::setArgument, nb::arg("index"),
           nb::arg("array"))
      .def("get_argument", &Trainer::getArgument, nb::arg("index"))
      .def("dump", &Trainer::dump, nb::arg("dir"));
}
