//===- PassOutputs.cpp - files written by passes besides the IR -----------===//
//
// See PassOutputs.h. The held files are llvm::sys::fs::TempFile objects made
// next to their destinations (so that the final rename stays on one file
// system); TempFile removes them if the process is interrupted by a signal.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/Transforms/PassOutputs.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include <mutex>
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
    if (os.has_error())
      return llvm::createFileError(path, os.error());
    return llvm::Error::success();
  }
  llvm::Expected<llvm::sys::fs::TempFile> temp =
      llvm::sys::fs::TempFile::create(path + ".tmp-%%%%%%",
                                      llvm::sys::fs::all_read |
                                          llvm::sys::fs::all_write);
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
