//===- JitCache.cpp - compiled training steps kept across runs ------------===//
//
// See JitCache.h. The key hashes the step's IR text (without locations:
// they do not reach the CPU code), the lowering options and a build stamp;
// the stamp is (path, size, mtime) of the binary holding this code (amp-train,
// the C API's Python module, ...) and of the one holding MLIR's
// ExecutionEngine (libMLIR.so), so a rebuilt or upgraded compiler never loads
// an object an older one wrote. Each entry ends with a trailer (magic, size,
// xxh3 of the object): a truncated or damaged entry is not linked but
// compiled again and overwritten.
//
//===----------------------------------------------------------------------===//

#include "amp/Runner/JitCache.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::amp;

/// A cache entry ends with "AMPJIT01", the object's size and its xxh3
/// (little endian).
static constexpr const char *kTrailerMagic = "AMPJIT01";
static constexpr size_t kTrailerSize = 24;

std::string mlir::amp::getJitCacheDir(StringRef requested) {
  if (!requested.empty())
    return requested.str();
  if (const char *dir = std::getenv("AMP_CACHE_DIR"))
    return dir; // set and empty: no cache
  SmallString<256> dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    dir = xdg;
  } else {
    if (!llvm::sys::path::home_directory(dir))
      return "";
    llvm::sys::path::append(dir, ".cache");
  }
  llvm::sys::path::append(dir, "amp-mlir", "jit");
  return dir.str().str();
}

/// "path size mtime" of the binary that holds `address`.
static std::string getBinaryStamp(const void *address) {
  Dl_info info;
  if (!dladdr(address, &info) || !info.dli_fname)
    return "?";
  std::string path = info.dli_fname;
  if (path.empty() || path.find('/') == std::string::npos)
    path = llvm::sys::fs::getMainExecutable(nullptr, const_cast<void *>(address));
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status))
    return path;
  return path + " " + std::to_string(status.getSize()) + " " +
         std::to_string(status.getLastModificationTime()
                            .time_since_epoch()
                            .count());
}

std::string mlir::amp::computeJitCacheKey(ModuleOp module, StringRef config) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags().enableDebugInfo(false));
  static int anchor;
  llvm::SHA256 hash;
  hash.update(text);
  hash.update("\n--config--\n");
  hash.update(config);
  hash.update("\n--build--\n");
  hash.update(getBinaryStamp(&anchor));
  hash.update(getBinaryStamp(
      reinterpret_cast<const void *>(&ExecutionEngine::setupTargetTripleAndDataLayout)));
  std::array<uint8_t, 32> digest = hash.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

CachedStep::~CachedStep() = default;

FailureOr<std::unique_ptr<CachedStep>>
CachedStep::load(StringRef objectPath, StringRef packedName,
                 ArrayRef<std::string> sharedLibs, std::string &error) {
  auto fail = [&](llvm::Error err) -> FailureOr<std::unique_ptr<CachedStep>> {
    error = llvm::toString(std::move(err));
    return failure();
  };
  for (const std::string &lib : sharedLibs)
    if (llvm::sys::DynamicLibrary::LoadLibraryPermanently(lib.c_str(),
                                                          &error))
      return failure();
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(objectPath);
  if (!file) {
    error = file.getError().message();
    return failure();
  }
  // The entry is the object then its trailer (storeInJitCache): a truncated
  // or damaged entry is refused before the JIT links it.
  StringRef bytes = (*file)->getBuffer();
  if (bytes.size() < kTrailerSize ||
      !bytes.take_back(kTrailerSize).starts_with(kTrailerMagic)) {
    error = "not a complete amp-mlir JIT cache entry (no trailer)";
    return failure();
  }
  StringRef trailer = bytes.take_back(kTrailerSize).drop_front(8);
  uint64_t size = llvm::support::endian::read64le(trailer.data());
  uint64_t hash = llvm::support::endian::read64le(trailer.data() + 8);
  StringRef objectBytes = bytes.drop_back(kTrailerSize);
  if (size != objectBytes.size() || hash != llvm::xxh3_64bits(objectBytes)) {
    error = "the JIT cache entry's checksum does not match its contents";
    return failure();
  }
  std::unique_ptr<llvm::MemoryBuffer> object =
      llvm::MemoryBuffer::getMemBufferCopy(objectBytes, objectPath);
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit)
    return fail(jit.takeError());
  auto generator =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          (*jit)->getDataLayout().getGlobalPrefix());
  if (!generator)
    return fail(generator.takeError());
  (*jit)->getMainJITDylib().addGenerator(std::move(*generator));
  if (llvm::Error err = (*jit)->addObjectFile(std::move(object)))
    return fail(std::move(err));
  auto symbol = (*jit)->lookup(packedName);
  if (!symbol)
    return fail(symbol.takeError());
  std::unique_ptr<CachedStep> step(new CachedStep());
  step->packed = symbol->toPtr<void (*)(void **)>();
  step->jit = std::move(*jit);
  return step;
}

void mlir::amp::storeInJitCache(ExecutionEngine &engine, StringRef path) {
  StringRef dir = llvm::sys::path::parent_path(path);
  if (llvm::sys::fs::create_directories(dir))
    return;
  SmallString<256> temp;
  int fd;
  if (llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, temp))
    return;
  ::close(fd);
  engine.dumpToObjectFile(temp);
  // The trailer: magic, object size, xxh3 of the object (checked by load).
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> object =
      llvm::MemoryBuffer::getFile(temp);
  bool ok = object && (*object)->getBufferSize() > 0;
  if (ok) {
    StringRef bytes = (*object)->getBuffer();
    char trailer[kTrailerSize];
    std::memcpy(trailer, kTrailerMagic, 8);
    llvm::support::endian::write64le(trailer + 8, bytes.size());
    llvm::support::endian::write64le(trailer + 16, llvm::xxh3_64bits(bytes));
    std::error_code ec;
    llvm::raw_fd_ostream out(temp, ec, llvm::sys::fs::OF_Append);
    if (!ec) {
      out.write(trailer, kTrailerSize);
      out.close();
      ok = !out.has_error();
      if (out.has_error())
        out.clear_error();
    } else {
      ok = false;
    }
  }
  if (!ok || llvm::sys::fs::rename(temp, path))
    llvm::sys::fs::remove(temp);
}
