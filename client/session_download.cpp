#include "session_download.h"

#include "absl/strings/str_cat.h"
#include "ntp_writer.h"

namespace ntprof::cli {

Download DownloadSession(v1::Collector::Stub& stub, const std::string& session,
                         const std::filesystem::path& out, bool single_file) {
  Download result;
  std::error_code ec;
  if (!single_file) std::filesystem::create_directories(out, ec);
  if (ec) {
    result.local_error = absl::StrCat("cannot create ", out.string(), ": ", ec.message());
    return result;
  }
  grpc::ClientContext context;
  v1::ExportRequest request;
  request.set_session(session);
  auto reader = stub.Export(&context, request);
  std::unique_ptr<NtpWriter> writer;
  v1::ExportMessage message;
  while (result.local_error.empty() && reader->Read(&message)) {
    absl::Status st;
    if (message.has_file()) {
      writer.reset();  // a file without a trailer stays so (the agent never closed it)
      if (single_file && !result.files.empty()) {
        result.local_error = absl::StrCat("session '", session, "' has more than one file (",
                                          "one per agent); give a directory: -o DIR");
        break;
      }
      const std::filesystem::path path = single_file ? out : out / message.file().name();
      auto created = NtpWriter::Create(path.string(), message.file().header());
      if (!created.ok()) {
        st = created.status();
      } else {
        writer = std::move(*created);
        result.files.push_back(path.string());
      }
    } else if (message.has_batch() && writer) {
      st = writer->WriteBatch(message.batch());
    } else if (message.has_trailer() && writer) {
      st = writer->Finalize(message.trailer());
      writer.reset();
    }
    if (!st.ok()) result.local_error = std::string(st.message());
  }
  writer.reset();
  if (!result.local_error.empty()) {
    context.TryCancel();
    for (const auto& f : result.files) std::filesystem::remove(f, ec);
    result.files.clear();
  }
  result.rpc = reader->Finish();
  if (result.rpc.error_code() == grpc::StatusCode::CANCELLED && !result.local_error.empty()) {
    result.rpc = grpc::Status::OK;
  }
  return result;
}

}  // namespace ntprof::cli
