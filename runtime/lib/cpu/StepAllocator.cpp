//===- StepAllocator.cpp - a compiled CPU step's buffers, cached ----------===//
//
// MLIR's memref-to-LLVM lowering with `use-generic-functions` allocates
// through _mlir_memref_to_llvm_alloc / _aligned_alloc and frees through
// _mlir_memref_to_llvm_free instead of malloc / free; amp-cpu-pipeline asks
// for them (its `runtime-allocator` option) and this file defines them.
//
// A training step allocates the same buffers, of the same sizes, in the same
// order, every step: a small model's step makes a few hundred allocations of
// a few hundred bytes each (an LSTM step: 267), for which glibc's malloc,
// free and their consolidation were over a third of the step's time. Here a
// freed block goes onto a free list of its size class (the size rounded up to
// 64 bytes), per thread, and the next allocation of that class takes it back:
// no search, no coalescing, no page faults.
//
// Every block is 64-byte aligned (the lowering asks for 64 at most for its
// vectors; a larger alignment is honoured and not cached). 16 bytes before
// the payload hold the base pointer of the allocation and the size class
// (0: not cached). Only blocks of at most kMaxCachedBytes are cached (larger
// buffers cost their own work many times over their allocation), and a
// thread caches at most kMaxCachedTotal bytes: past that a freed block goes
// back to malloc, so the memory held on top of the step's own peak is
// bounded. A block freed on another thread than the one that allocated it
// joins the freeing thread's lists; each thread's cached blocks are released
// when it exits.
//
//===----------------------------------------------------------------------===//

#include "amp_runtime.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr uint64_t kAlignment = 64;
constexpr uint64_t kMaxCachedBytes = uint64_t{1} << 20;
constexpr uint64_t kMaxCachedTotal = uint64_t{64} << 20;

/// The header right before a payload.
struct Header {
  void *base;     // what aligned_alloc returned
  uint64_t size;  // the size class in bytes; 0 when not cached
};
static_assert(sizeof(Header) <= kAlignment, "the header fits the padding");

Header *headerOf(void *payload) {
  return reinterpret_cast<Header *>(static_cast<char *>(payload) -
                                    sizeof(Header));
}

/// A block of at least `size` bytes aligned to `alignment` (a power of two
/// of at least 64), with its header; null when out of memory.
void *allocateBlock(uint64_t size, uint64_t alignment, uint64_t sizeClass) {
  // aligned_alloc wants a multiple of the alignment.
  uint64_t total = (alignment + size + alignment - 1) / alignment * alignment;
  void *base = std::aligned_alloc(alignment, total);
  if (!base)
    return nullptr;
  void *payload = static_cast<char *>(base) + alignment;
  *headerOf(payload) = Header{base, sizeClass};
  return payload;
}

/// This thread's free lists, indexed by size class / 64 (grown as classes
/// appear: a hash lookup per allocation showed in small steps' profiles).
struct Cache {
  std::vector<std::vector<void *>> lists;
  uint64_t bytes = 0;

  std::vector<void *> &listOf(uint64_t sizeClass) {
    uint64_t index = sizeClass / kAlignment;
    if (index >= lists.size())
      lists.resize(index + 1);
    return lists[index];
  }

  ~Cache() {
    for (std::vector<void *> &blocks : lists)
      for (void *payload : blocks)
        std::free(headerOf(payload)->base);
  }
};

/// This thread's cache: null until its first allocation, kGone once the
/// thread's exit has released it (a block freed after that goes back to
/// malloc). A trivially initialised pointer, so that an allocation costs
/// one thread-local lookup (this library is loaded with dlopen: each lookup
/// is a __tls_get_addr call, and a guarded thread_local object took two).
thread_local Cache *threadCache = nullptr;
Cache *const kGone = reinterpret_cast<Cache *>(uintptr_t{1});

/// Releases the thread's cache at its exit.
struct CacheOwner {
  ~CacheOwner() {
    delete threadCache;
    threadCache = kGone;
  }
};

/// This thread's cache; null once it is gone.
Cache *cache() {
  Cache *c = threadCache;
  if (c == kGone)
    return nullptr;
  if (!c) {
    thread_local CacheOwner owner;
    (void)owner;
    c = threadCache = new Cache();
  }
  return c;
}

void *allocate(uint64_t size, uint64_t alignment) {
  if (alignment < kAlignment)
    alignment = kAlignment;
  if ((alignment & (alignment - 1)) != 0)
    return nullptr;
  uint64_t sizeClass = size == 0 ? kAlignment
                                 : (size + kAlignment - 1) / kAlignment *
                                       kAlignment;
  if (alignment != kAlignment || sizeClass > kMaxCachedBytes)
    return allocateBlock(size, alignment, 0);
  Cache *c = cache();
  if (!c)
    return allocateBlock(size, alignment, 0);
  std::vector<void *> &list = c->listOf(sizeClass);
  if (!list.empty()) {
    void *payload = list.back();
    list.pop_back();
    c->bytes -= sizeClass;
    return payload;
  }
  return allocateBlock(sizeClass, kAlignment, sizeClass);
}

} // namespace

extern "C" {

AMP_RUNTIME_API void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  return allocate(size, kAlignment);
}

AMP_RUNTIME_API void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment,
                                                         uint64_t size) {
  return allocate(size, alignment);
}

AMP_RUNTIME_API void _mlir_memref_to_llvm_free(void *payload) {
  if (!payload)
    return;
  Header header = *headerOf(payload);
  Cache *c = header.size == 0 ? nullptr : cache();
  if (!c || c->bytes + header.size > kMaxCachedTotal) {
    std::free(header.base);
    return;
  }
  c->listOf(header.size).push_back(payload);
  c->bytes += header.size;
}

} // extern "C"
