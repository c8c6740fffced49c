// Where ntprofctl (and `ntprofd serve`) finds the collector, and how it talks to it.
//
// Address, first found wins: --collector, $NTPROF_COLLECTOR, `collector = ...` in
// ~/.config/ntprof/ntprofctl.conf, then /etc/ntprof/ntprofctl.conf, else the packaged collector's
// socket when it exists (the machine runs ntprof-collector.service), else localhost:7420 (the
// collector's default listener). The config file also takes tls-ca, tls-cert and tls-key lines.
// Unix sockets and localhost speak plaintext unless a TLS file is given; any other address uses TLS
// (system CA roots unless --tls-ca).
#pragma once

#include <grpcpp/grpcpp.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace ntprof::cli {

inline constexpr const char* kDefaultCollector = "localhost:7420";
// Where ntprof-collector.service listens (NTPROF_COLLECTOR_SOCKET in CMakeLists.txt).
extern const char* const kPackagedCollectorSocket;

struct CollectorFlags {
  std::string address;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  bool insecure = false;
  // Seconds between HTTP/2 pings on an idle connection (at least 5: the collector refuses pings
  // closer than 4 s apart); a peer that does not answer within the same time is dropped, so a
  // half-open connection (a vanished machine, a frozen network path) ends and the caller reconnects.
  int keepalive_s = 20;
  // A connection of this channel's own, not one shared with the process's other channels to the
  // address: a shared one may still be backing off from a collector that died (watch reconnects).
  bool own_connection = false;
};

// Adds --collector, --tls-ca, --tls-cert, --tls-key, --insecure to a verb. The same flags given
// before the verb (AddGlobalCollectorFlags) fill the ones the verb's own command line leaves out.
void AddCollectorFlags(CLI::App* cmd, CollectorFlags* flags);
// The same without --collector (for a verb that talks to an agent).
void AddTlsFlags(CLI::App* cmd, CollectorFlags* flags);
// The program's own --collector, --tls-ca, --tls-cert, --tls-key, --insecure, so that they may
// also come before the verb (`ntprofctl --collector c2:7420 start base -s 100`). Add the verbs'
// flags to subcommands of this app.
void AddGlobalCollectorFlags(CLI::App& app);

// A report/compare argument that is not a recording on disk names a session on the collector.
bool NamesSession(const std::string& arg);

struct CollectorTarget {
  std::string address;
  std::string source;  // where the address came from, for error messages
  std::shared_ptr<grpc::Channel> channel;
};

// Fills the unset fields of *flags from $NTPROF_COLLECTOR, then the `key = value` config files in
// order (first found wins). Returns where the address came from, "" when nowhere.
std::string ResolveCollector(CollectorFlags* flags, const std::vector<std::string>& config_files);

// Fills the gaps in flags from the environment and the config files (else the defaults above),
// then opens a channel. Fails (with a message naming the file) only when a TLS file cannot be
// read.
bool OpenCollector(const CollectorFlags& flags, CollectorTarget* target, std::string* error);
// Same for an agent's address (`probe`): no config lookup.
bool OpenChannel(const std::string& address, const CollectorFlags& tls,
                 std::shared_ptr<grpc::Channel>* channel, std::string* error);

// Prints one line for a failed call and returns the exit status: 1 when the collector cannot be
// reached or failed, 2 when it refused the request as bad input.
int RpcFailure(const std::string& verb, const CollectorTarget& target, const grpc::Status& status);

// A context with a deadline for unary calls.
std::unique_ptr<grpc::ClientContext> UnaryContext();

// Opens the collector and runs fn(stub, target), or prints why it could not; returns the exit
// status.
template <typename Stub, typename Fn>
int WithCollector(const std::string& verb, const CollectorFlags& flags, Fn fn) {
  CollectorTarget target;
  std::string error;
  if (!OpenCollector(flags, &target, &error)) {
    std::cerr << "ntprofctl " << verb << ": " << error << "\n";
    return 2;  // kBadInput: an unreadable TLS file
  }
  auto stub = Stub::NewStub(target.channel);
  return fn(*stub, target);
}

}  // namespace ntprof::cli
