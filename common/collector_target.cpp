#include "collector_target.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "exit_codes.h"

namespace ntprof::cli {
namespace {

// `key = value` lines; '#' starts a comment.
void ReadConfig(const std::string& path, CollectorFlags* flags, std::string* source) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key(absl::StripAsciiWhitespace(line.substr(0, eq)));
    const std::string value(absl::StripAsciiWhitespace(line.substr(eq + 1)));
    auto fill = [&](std::string* field) {
      if (field->empty()) *field = value;
    };
    if (key == "collector" && flags->address.empty()) {
      flags->address = value;
      *source = path;
    } else if (key == "tls-ca") {
      fill(&flags->tls_ca);
    } else if (key == "tls-cert") {
      fill(&flags->tls_cert);
    } else if (key == "tls-key") {
      fill(&flags->tls_key);
    }
  }
}

bool ReadFile(const std::string& path, std::string* out, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = absl::StrCat("cannot read ", path, ": check the path and its permissions");
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  *out = text.str();
  return true;
}

bool IsLocal(const std::string& address) {
  return absl::StartsWith(address, "unix:") || absl::StartsWith(address, "localhost:") ||
         absl::StartsWith(address, "127.") || absl::StartsWith(address, "[::1]:");
}

}  // namespace

void AddCollectorFlags(CLI::App* cmd, CollectorFlags* flags) {
  cmd->add_option("--collector", flags->address,
                  "Collector address (HOST:PORT or unix:PATH); default $NTPROF_COLLECTOR, the "
                  "config file, else localhost:7420");
  AddTlsFlags(cmd, flags);
}

void AddTlsFlags(CLI::App* cmd, CollectorFlags* flags) {
  cmd->add_option("--tls-ca", flags->tls_ca, "PEM CA that signed the server's certificate");
  cmd->add_option("--tls-cert", flags->tls_cert, "PEM client certificate (mutual TLS)");
  cmd->add_option("--tls-key", flags->tls_key, "PEM key of the client certificate");
  cmd->add_flag("--insecure", flags->insecure, "Plaintext even to a non-local server");
}

bool NamesSession(const std::string& arg) {
  std::error_code ec;
  return !std::filesystem::exists(arg, ec) && arg.find('/') == std::string::npos &&
         arg.find(',') == std::string::npos && !absl::EndsWith(arg, ".ntp");
}

bool OpenChannel(const std::string& address, const CollectorFlags& tls,
                 std::shared_ptr<grpc::Channel>* channel, std::string* error) {
  const bool want_tls =
      !tls.tls_ca.empty() || !tls.tls_cert.empty() || (!IsLocal(address) && !tls.insecure);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (want_tls && !absl::StartsWith(address, "unix:")) {
    grpc::SslCredentialsOptions options;
    if (!tls.tls_ca.empty() && !ReadFile(tls.tls_ca, &options.pem_root_certs, error)) return false;
    if (!tls.tls_cert.empty() && !ReadFile(tls.tls_cert, &options.pem_cert_chain, error))
      return false;
    if (!tls.tls_key.empty() && !ReadFile(tls.tls_key, &options.pem_private_key, error))
      return false;
    credentials = grpc::SslCredentials(options);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);  // exports and reports can be large
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, tls.keepalive_s * 1000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, tls.keepalive_s * 1000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);  // an idle agent keeps pinging
  if (tls.own_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  *channel = grpc::CreateCustomChannel(address, credentials, args);
  return true;
}

std::string ResolveCollector(CollectorFlags* flags, const std::vector<std::string>& config_files) {
  std::string source = flags->address.empty() ? "" : "--collector";
  if (flags->address.empty()) {
    if (const char* env = std::getenv("NTPROF_COLLECTOR"); env && *env) {
      flags->address = env;
      source = "NTPROF_COLLECTOR";
    }
  }
  for (const std::string& path : config_files) ReadConfig(path, flags, &source);
  return source;
}

bool OpenCollector(const CollectorFlags& given, CollectorTarget* target, std::string* error) {
  CollectorFlags flags = given;
  std::vector<std::string> configs;
  if (const char* home = std::getenv("HOME")) {
    configs.push_back(absl::StrCat(home, "/.config/ntprof/ntprofctl.conf"));
  }
  configs.push_back("/etc/ntprof/ntprofctl.conf");
  std::string source = ResolveCollector(&flags, configs);
  if (flags.address.empty()) {
    flags.address = kDefaultCollector;
    source = "the default";
  }
  target->address = flags.address;
  target->source = source;
  return OpenChannel(flags.address, flags, &target->channel, error);
}

int RpcFailure(const std::string& verb, const CollectorTarget& target, const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      std::cerr << "ntprofctl " << verb << ": cannot reach the collector at " << target.address
                << " (from " << target.source << "): " << status.error_message()
                << "; start ntprof-collector there or point --collector / NTPROF_COLLECTOR at it\n";
      return kFailed;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::FAILED_PRECONDITION:
      std::cerr << "ntprofctl " << verb << ": " << status.error_message() << "\n";
      return kBadInput;
    default:
      std::cerr << "ntprofctl " << verb << ": the collector at " << target.address
                << " failed: " << status.error_message() << "\n";
      return kFailed;
  }
}

std::unique_ptr<grpc::ClientContext> UnaryContext() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return context;
}

}  // namespace ntprof::cli
