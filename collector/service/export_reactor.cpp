#include "export_reactor.h"

#include "status_conversion.h"

namespace ntprof::collector {

void ExportReactor::WriteNext() {
  auto more = export_.Next(&current_);
  if (!more.ok()) {
    Finish(common::ToGrpc(more.status()));
  } else if (!*more) {
    Finish(grpc::Status::OK);
  } else {
    StartWrite(&current_);
  }
}

}  // namespace ntprof::collector
