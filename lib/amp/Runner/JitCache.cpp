//===- JitCache.cpp - compiled training steps kept across runs ------------===//
//
// See JitCache.h. The key hashes the step's IR text (without locations:
// they do not reach the CPU code), the lowering options and a build stamp;
// the stamp is (path, size, mtime) of the binary holding this code (amp-train,
// the C API's Python module, ...) and of the one holding MLIR's
// ExecutionEngine (libMLIR.so), so a rebuilt or upgraded compiler never loads
// an object an older one wrote. Each entry ends with a trailer (magic, size,
// xxh3 of the objects before it): a truncated or damaged entry is not linked
// but compiled again and overwritten. LinkedStep links the objects of a step,
// cached or just compiled, into an ORC LLJIT and runs the step's global
// constructors (kStepInitName) once linked, its destructors when it goes.
//
// The objects are compiled for the small code model, position independent
// (compileHostObjects): calls and addresses within +-2 GiB of the code, half
// the instruction selection time of the large model LLVM's JIT defaults to
// (Inception-v3's f16 glue, its step body and C-interface wrappers, at -O0:
// 10.4 s -> 4.8 s). RuntimeDyld, which links them (its GDB and perf
// listeners are what `perf inject --jit` reads), puts
// the calls to the process's libraries through stubs and their addresses
// through a GOT, but resolves the references between the step's own sections
// and objects (its parts call each other's hidden functions) as 32-bit
// offsets: every object of one step is therefore placed in one arena of
// address space reserved when the step is linked (ArenaMapper), so that no
// two of its sections, GOTs or stubs are 2 GiB apart whatever else the
// process maps.
//
//===----------------------------------------------------------------------===//

#include "amp/Runner/JitCache.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/JITEventListener.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::amp;

/// A cache entry ends with "AMPJIT02", the size of what precedes the
/// trailer and its xxh3 (little endian).
static constexpr const char *kTrailerMagic = "AMPJIT02";
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

namespace {
/// Pages for a step's sections (SectionMemoryManager's blocks), carved in
/// order from one reservation of address space: inaccessible until carved,
/// then read-write until the memory manager applies the sections'
/// permissions. The reservation is returned when the last memory manager
/// using it goes; a block released before (never, in practice) stays
/// reserved. Should the reservation run out, blocks are mapped next to it.
class ArenaMapper final : public llvm::SectionMemoryManager::MemoryMapper {
public:
  /// Reserves `size` bytes (rounded up to pages); check valid().
  explicit ArenaMapper(size_t size) {
    page = static_cast<size_t>(::getpagesize());
    size = llvm::alignTo(size, page);
    void *base = ::mmap(nullptr, size, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base != MAP_FAILED) {
      begin = static_cast<char *>(base);
      end = begin + size;
      next = begin;
    }
  }
  ~ArenaMapper() override {
    if (begin)
      ::munmap(begin, end - begin);
  }
  bool valid() const { return begin != nullptr; }

  llvm::sys::MemoryBlock
  allocateMappedMemory(llvm::SectionMemoryManager::AllocationPurpose,
                       size_t numBytes, const llvm::sys::MemoryBlock *const,
                       unsigned flags, std::error_code &ec) override {
    size_t size = llvm::alignTo(numBytes, page);
    std::lock_guard<std::mutex> lock(mutex);
    if (static_cast<size_t>(end - next) < size) {
      // Not expected (the reservation is sized for the objects): pages next
      // to the arena if the system gives them, as SectionMemoryManager's own
      // mapper asks for (RuntimeDyld aborts the process on a failed
      // allocation).
      llvm::sys::MemoryBlock near(end, 0);
      return llvm::sys::Memory::allocateMappedMemory(numBytes, &near, flags,
                                                     ec);
    }
    llvm::sys::MemoryBlock block(next, size);
    if ((ec = llvm::sys::Memory::protectMappedMemory(block, flags)))
      return llvm::sys::MemoryBlock();
    next += size;
    return block;
  }
  std::error_code protectMappedMemory(const llvm::sys::MemoryBlock &block,
                                      unsigned flags) override {
    return llvm::sys::Memory::protectMappedMemory(block, flags);
  }
  std::error_code releaseMappedMemory(llvm::sys::MemoryBlock &block) override {
    char *base = static_cast<char *>(block.base());
    if (base && (base < begin || base >= end))
      return llvm::sys::Memory::releaseMappedMemory(block);
    block = llvm::sys::MemoryBlock();
    return {};
  }

private:
  size_t page = 4096;
  char *begin = nullptr, *end = nullptr, *next = nullptr;
  /// Objects may be linked on several threads.
  std::mutex mutex;
};

/// Holds a memory manager's share of the arena: a base class constructed
/// before SectionMemoryManager and destroyed after it, whose destructor
/// releases its blocks through the mapper.
struct ArenaShare {
  std::shared_ptr<ArenaMapper> arena;
};

/// SectionMemoryManager over the step's arena.
class ArenaMemoryManager final : private ArenaShare,
                                 public llvm::SectionMemoryManager {
public:
  explicit ArenaMemoryManager(std::shared_ptr<ArenaMapper> arena)
      : ArenaShare{std::move(arena)},
        llvm::SectionMemoryManager(ArenaShare::arena.get()) {}
};
} // namespace

LinkedStep::~LinkedStep() {
  // The module's destructors (a GPU step unloads its kernels) while the code
  // they run is still linked.
  if (fini)
    fini();
}

FailureOr<std::unique_ptr<LinkedStep>>
LinkedStep::link(std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects,
                 StringRef packedName, ArrayRef<std::string> sharedLibs,
                 std::string &error) {
  auto fail = [&](llvm::Error err) -> FailureOr<std::unique_ptr<LinkedStep>> {
    error = llvm::toString(std::move(err));
    return failure();
  };
  for (const std::string &lib : sharedLibs)
    if (llvm::sys::DynamicLibrary::LoadLibraryPermanently(lib.c_str(),
                                                          &error))
      return failure();
  // One arena for all the objects (file comment): their sections are at
  // most their size in the file, plus stubs and GOT entries (fewer bytes
  // than the relocations that need them), zero-initialised data and a
  // partly used page per section; four times the objects and 64 MiB more is
  // address space only.
  size_t objectBytes = 0;
  for (const std::unique_ptr<llvm::MemoryBuffer> &object : objects)
    objectBytes += object->getBufferSize();
  auto arena =
      std::make_shared<ArenaMapper>(4 * objectBytes + (size_t(64) << 20));
  if (!arena->valid()) {
    error = "cannot reserve address space for the step's code: " +
            std::string(std::strerror(errno));
    return failure();
  }
  // RuntimeDyld with the listeners, as in the ExecutionEngine: a debugger
  // and perf see the step's functions.
  auto createLayer = [arena](llvm::orc::ExecutionSession &session)
      -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
    auto layer = std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
        session, [arena](const llvm::MemoryBuffer &) {
          return std::make_unique<ArenaMemoryManager>(arena);
        });
    if (llvm::JITEventListener *gdb =
            llvm::JITEventListener::createGDBRegistrationListener())
      layer->registerJITEventListener(*gdb);
    if (llvm::JITEventListener *perf =
            llvm::JITEventListener::createPerfJITEventListener())
      layer->registerJITEventListener(*perf);
    return layer;
  };
  auto jit =
      llvm::orc::LLJITBuilder().setObjectLinkingLayerCreator(createLayer)
          .create();
  if (!jit)
    return fail(jit.takeError());
  auto generator =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          (*jit)->getDataLayout().getGlobalPrefix());
  if (!generator)
    return fail(generator.takeError());
  (*jit)->getMainJITDylib().addGenerator(std::move(*generator));
  for (std::unique_ptr<llvm::MemoryBuffer> &object : objects)
    if (llvm::Error err = (*jit)->addObjectFile(std::move(object)))
      return fail(std::move(err));
  auto symbol = (*jit)->lookup(packedName);
  if (!symbol)
    return fail(symbol.takeError());
  // compileHostObjects defines both (empty where the module had no global
  // constructor or destructor).
  auto init = (*jit)->lookup(kStepInitName);
  if (!init)
    return fail(init.takeError());
  auto fini = (*jit)->lookup(kStepFiniName);
  if (!fini)
    return fail(fini.takeError());
  std::unique_ptr<LinkedStep> step(new LinkedStep());
  step->packed = symbol->toPtr<void (*)(void **)>();
  step->jit = std::move(*jit);
  init->toPtr<void (*)()>()();
  step->fini = fini->toPtr<void (*)()>();
  return step;
}

void (*LinkedStep::lookupPacked(StringRef name) const)(void **) {
  auto symbol = jit->lookup(name);
  if (!symbol) {
    llvm::consumeError(symbol.takeError());
    return nullptr;
  }
  return symbol->toPtr<void (*)(void **)>();
}

FailureOr<std::vector<std::unique_ptr<llvm::MemoryBuffer>>>
mlir::amp::readJitCacheEntry(StringRef path, std::string &error) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path);
  if (!file) {
    error = file.getError().message();
    return failure();
  }
  // The entry is its objects, each after its size, then the trailer
  // (writeJitCacheEntry): a truncated or damaged entry is refused before the
  // JIT links it.
  StringRef bytes = (*file)->getBuffer();
  if (bytes.size() < kTrailerSize ||
      !bytes.take_back(kTrailerSize).starts_with(kTrailerMagic)) {
    error = "not a complete amp-mlir JIT cache entry (no trailer)";
    return failure();
  }
  StringRef trailer = bytes.take_back(kTrailerSize).drop_front(8);
  uint64_t size = llvm::support::endian::read64le(trailer.data());
  uint64_t hash = llvm::support::endian::read64le(trailer.data() + 8);
  StringRef payload = bytes.drop_back(kTrailerSize);
  if (size != payload.size() || hash != llvm::xxh3_64bits(payload)) {
    error = "the JIT cache entry's checksum does not match its contents";
    return failure();
  }
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
  while (!payload.empty()) {
    uint64_t objectSize = 0;
    if (payload.size() >= 8) {
      objectSize = llvm::support::endian::read64le(payload.data());
      payload = payload.drop_front(8);
    }
    if (objectSize == 0 || objectSize > payload.size()) {
      error = "the JIT cache entry's objects do not add up to its size";
      return failure();
    }
    objects.push_back(llvm::MemoryBuffer::getMemBufferCopy(
        payload.take_front(objectSize),
        path.str() + "#" + std::to_string(objects.size())));
    payload = payload.drop_front(objectSize);
  }
  if (objects.empty()) {
    error = "the JIT cache entry holds no object";
    return failure();
  }
  return objects;
}

void mlir::amp::writeJitCacheEntry(
    ArrayRef<std::unique_ptr<llvm::MemoryBuffer>> objects, StringRef path) {
  StringRef dir = llvm::sys::path::parent_path(path);
  if (llvm::sys::fs::create_directories(dir))
    return;
  std::string payload;
  for (const std::unique_ptr<llvm::MemoryBuffer> &object : objects) {
    char size[8];
    llvm::support::endian::write64le(size, object->getBufferSize());
    payload.append(size, 8);
    payload += object->getBuffer();
  }
  // The trailer: magic, payload size, xxh3 of the payload (checked by
  // readJitCacheEntry).
  char trailer[kTrailerSize];
  std::memcpy(trailer, kTrailerMagic, 8);
  llvm::support::endian::write64le(trailer + 8, payload.size());
  llvm::support::endian::write64le(trailer + 16, llvm::xxh3_64bits(payload));
  payload.append(trailer, kTrailerSize);

  SmallString<256> temp;
  int fd;
  if (llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, temp))
    return;
  bool ok;
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << payload;
    out.close();
    ok = !out.has_error();
    if (out.has_error())
      out.clear_error();
  }
  if (!ok || llvm::sys::fs::rename(temp, path))
    llvm::sys::fs::remove(temp);
}
