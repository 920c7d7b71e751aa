//===- PassOutputs.cpp - files written by passes besides the IR -----------===//
//
// See PassOutputs.h. The held files are llvm::sys::fs::TempFile objects made
// next to their destinations (so that the final rename stays on one file
// system); TempFile removes them if the process is interrupted by a signal.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/Transforms/PassOutputs.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include <cerrno>
#include <csignal>
#include <mutex>
#include <unistd.h>
#include <vector>

using namespace mlir;
using namespace mlir::amp;

namespace {
struct HeldFile {
  llvm::sys::fs::TempFile temp;
  std::string path;
};
} // namespace

struct PassOutputTransaction::Impl {
  std::vector<HeldFile> files;
};

static std::mutex &transactionMutex() {
  static std::mutex mutex;
  return mutex;
}
static PassOutputTransaction::Impl *openTransaction = nullptr;

PassOutputTransaction::PassOutputTransaction() : impl(new Impl) {
  std::lock_guard<std::mutex> lock(transactionMutex());
  assert(!openTransaction && "one PassOutputTransaction at a time");
  openTransaction = impl.get();
}

PassOutputTransaction::~PassOutputTransaction() {
  discard();
  std::lock_guard<std::mutex> lock(transactionMutex());
  if (openTransaction == impl.get())
    openTransaction = nullptr;
}

llvm::Error PassOutputTransaction::commit() {
  std::lock_guard<std::mutex> lock(transactionMutex());
  llvm::Error result = llvm::Error::success();
  for (HeldFile &file : impl->files) {
    if (llvm::Error err = file.temp.keep(file.path)) {
      llvm::Error located = llvm::createFileError(file.path, std::move(err));
      result = llvm::joinErrors(std::move(result), std::move(located));
    }
  }
  impl->files.clear();
  return result;
}

void PassOutputTransaction::discard() {
  std::lock_guard<std::mutex> lock(transactionMutex());
  for (HeldFile &file : impl->files)
    llvm::consumeError(file.temp.discard());
  impl->files.clear();
}

llvm::Expected<llvm::sys::fs::TempFile>
mlir::amp::createOutputTempFile(StringRef path) {
  // Leftovers: "<name>.tmp-<pid>-XXXXXX" next to `path` whose process has
  // ended.
  StringRef dir = llvm::sys::path::parent_path(path);
  std::string prefix = (llvm::sys::path::filename(path) + ".tmp-").str();
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir.empty() ? "." : dir, ec), end;
       it != end && !ec; it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    if (!name.consume_front(prefix))
      continue;
    StringRef pidText = name.split('-').first;
    long pid;
    if (pidText.getAsInteger(10, pid) || pid <= 0 ||
        pid == static_cast<long>(::getpid()))
      continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      llvm::sys::fs::remove(it->path());
  }
  return llvm::sys::fs::TempFile::create(
      path + ".tmp-" + std::to_string(::getpid()) + "-%%%%%%",
      llvm::sys::fs::all_read | llvm::sys::fs::all_write);
}

bool mlir::amp::isSpecialOutputPath(StringRef path) {
  if (path == "-")
    return true;
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status))
    return false; // Missing (or unreadable): a regular file is made.
  return llvm::sys::fs::exists(status) &&
         !llvm::sys::fs::is_regular_file(status);
}

llvm::Error mlir::amp::writePassOutput(
    StringRef path, llvm::function_ref<void(llvm::raw_ostream &)> write) {
  if (isSpecialOutputPath(path)) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return llvm::createFileError(path, ec);
    write(os);
    os.flush();
    if (os.has_error()) {
      // Cleared, or the stream's destructor ends the process (LLVM ERROR).
      std::error_code error = os.error();
      os.clear_error();
      return llvm::createFileError(path, error);
    }
    return llvm::Error::success();
  }
  llvm::Expected<llvm::sys::fs::TempFile> temp = createOutputTempFile(path);
  if (!temp)
    return llvm::createFileError(path, temp.takeError());
  {
    llvm::raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    write(os);
    os.flush();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      llvm::consumeError(temp->discard());
      return llvm::createFileError(path, ec);
    }
  }
  std::lock_guard<std::mutex> lock(transactionMutex());
  if (openTransaction) {
    openTransaction->files.push_back({std::move(*temp), path.str()});
    return llvm::Error::success();
  }
  if (llvm::Error err = temp->keep(path))
    return llvm::createFileError(path, std::move(err));
  return llvm::Error::success();
}
