#include "collector_target.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <span>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "exit_codes.h"

namespace ntprof::cli {

const char* const kPackagedCollectorSocket = NTPROF_COLLECTOR_SOCKET;

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

// The flags a verb shares with the program (given before the verb), and where each lands.
struct SharedOption {
  const char* name;
  const char* help;
  std::string CollectorFlags::*field;
};
// The first is a collector verb's only; the others every verb's.
constexpr SharedOption kSharedOptions[] = {
    {"--collector",
     "Collector address (HOST:PORT or unix:PATH); default $NTPROF_COLLECTOR, the config file, "
     "else the packaged collector's socket " NTPROF_COLLECTOR_SOCKET " when it exists, else "
     "localhost:7420",
     &CollectorFlags::address},
    {"--tls-ca", "PEM CA that signed the server's certificate", &CollectorFlags::tls_ca},
    {"--tls-cert", "PEM client certificate (mutual TLS)", &CollectorFlags::tls_cert},
    {"--tls-key", "PEM key of the client certificate", &CollectorFlags::tls_key}};
constexpr const char* kInsecureFlag = "--insecure";
constexpr const char* kInsecureHelp = "Plaintext even to a non-local server";

// Runs as the verb's parsing starts, before its own flags are read (which then override): the
// program's flags that came before the verb. One the verb does not take is refused, not ignored.
void InheritProgramFlags(const CLI::App& verb, CollectorFlags* flags) {
  const CLI::App* program = verb.get_parent();
  if (program == nullptr) return;
  auto given = [&](const char* name) -> const CLI::Option* {
    const CLI::Option* option = program->get_option_no_throw(name);
    if (option == nullptr || option->count() == 0) return nullptr;
    if (verb.get_option_no_throw(name) == nullptr) {
      throw CLI::ValidationError(name, "does not apply to `" + verb.get_name() + "`");
    }
    return option;
  };
  for (const SharedOption& shared : kSharedOptions) {
    if (const CLI::Option* option = given(shared.name)) {
      flags->*shared.field = option->as<std::string>();
    }
  }
  if (given(kInsecureFlag)) flags->insecure = true;
}

}  // namespace

void AddCollectorFlags(CLI::App* cmd, CollectorFlags* flags) {
  const SharedOption& collector = kSharedOptions[0];
  cmd->add_option(collector.name, flags->*collector.field, collector.help);
  AddTlsFlags(cmd, flags);
}

void AddTlsFlags(CLI::App* cmd, CollectorFlags* flags) {
  for (const SharedOption& shared : std::span(kSharedOptions).subspan(1)) {
    cmd->add_option(shared.name, flags->*shared.field, shared.help);
  }
  cmd->add_flag(kInsecureFlag, flags->insecure, kInsecureHelp);
  cmd->preparse_callback([cmd, flags](size_t) { InheritProgramFlags(*cmd, flags); });
}

void AddGlobalCollectorFlags(CLI::App& app) {
  const char* group = "Collector and TLS (before or after the verb)";
  for (const SharedOption& shared : kSharedOptions) {
    app.add_option(shared.name, shared.help)->group(group);
  }
  app.add_flag(kInsecureFlag, kInsecureHelp)->group(group);
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
    std::error_code ec;
    if (std::filesystem::is_socket(kPackagedCollectorSocket, ec)) {
      flags.address = absl::StrCat("unix:", kPackagedCollectorSocket);
      source = "the default: the packaged collector's socket";
    } else {
      flags.address = kDefaultCollector;
      source = "the default";
    }
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
                << (absl::StrContains(status.error_message(), "Permission denied")
                        ? "; the socket's mode admits its owner and root only: run ntprofctl as "
                          "root there, or dial a TCP listener of the collector"
                        : "; start ntprof-collector there or point --collector / "
                          "NTPROF_COLLECTOR at it")
                << "\n";
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
