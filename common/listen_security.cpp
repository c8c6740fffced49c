#include "listen_security.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ntprof::common {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", what, " ", path, ": check the path and its permissions"));
  }
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a PEM file (", what, ")"));
  }
  return text.str();
}

}  // namespace

absl::StatusOr<TlsMaterial> LoadTls(const TlsFlags& flags) {
  TlsMaterial m;
  if (flags.cert_file.empty() != flags.key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!flags.enabled()) {
    if (!flags.ca_file.empty() || flags.require_client_cert) {
      return absl::InvalidArgumentError(
          "--tls-ca/--require-client-cert need --tls-cert and --tls-key");
    }
    return m;
  }
  if (flags.require_client_cert && flags.ca_file.empty()) {
    return absl::InvalidArgumentError(
        "--require-client-cert needs --tls-ca: the CA that signs the agents' certificates");
  }
  auto cert = ReadPem(flags.cert_file, "certificate");
  if (!cert.ok()) return cert.status();
  auto key = ReadPem(flags.key_file, "private key");
  if (!key.ok()) return key.status();
  m.cert = *cert;
  m.key = *key;
  if (!flags.ca_file.empty()) {
    auto ca = ReadPem(flags.ca_file, "CA certificate");
    if (!ca.ok()) return ca.status();
    m.ca = *ca;
  }
  return m;
}

bool IsLocalAddress(const std::string& address) {
  return absl::StartsWith(address, "unix:") || absl::StartsWith(address, "localhost:") ||
         absl::StartsWith(address, "127.") || absl::StartsWith(address, "[::1]:");
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> CredentialsFor(
    const std::string& address, const TlsFlags& flags, const TlsMaterial& material) {
  if (absl::StartsWith(address, "unix:") || !flags.enabled()) {
    if (!IsLocalAddress(address) && !flags.insecure) {
      return absl::InvalidArgumentError(absl::StrCat(
          "refusing to listen on ", address, " without TLS: pass --tls-cert and --tls-key ",
          "(and --tls-ca --require-client-cert for mutual TLS), or --insecure on a trusted "
          "network"));
    }
    return grpc::InsecureServerCredentials();
  }
  grpc::SslServerCredentialsOptions options(
      flags.require_client_cert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
      : material.ca.empty()     ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = material.ca;
  options.pem_key_cert_pairs.push_back({material.key, material.cert});
  return grpc::SslServerCredentials(options);
}

}  // namespace ntprof::common
