// Which credentials a listener gets. TLS on every TCP listener; plaintext only on a unix socket
// (its file mode guards it), on localhost, or when the operator says --insecure. With a CA and
// --require-client-cert, a client (an agent) whose certificate that CA did not sign is refused
// during the handshake.
#pragma once

#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace ntprof::common {

struct TlsFlags {
  std::string cert_file;
  std::string key_file;
  std::string ca_file;
  bool require_client_cert = false;
  bool insecure = false;

  bool enabled() const { return !cert_file.empty(); }
};

// The PEM files, read; errors name the file. Checks the flag combinations.
struct TlsMaterial {
  std::string cert, key, ca;
};
absl::StatusOr<TlsMaterial> LoadTls(const TlsFlags& flags);

// "unix:...", "localhost:N", "127.x.x.x:N", "[::1]:N".
bool IsLocalAddress(const std::string& address);

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> CredentialsFor(
    const std::string& address, const TlsFlags& flags, const TlsMaterial& material);

}  // namespace ntprof::common
