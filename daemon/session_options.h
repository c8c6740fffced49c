// What a recording session is asked to do: the agent-side twin of a collector's StartSession.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ntprof/v1/record.pb.h"

namespace ntprof::agent {

enum class Role { kHost, kTarget };

struct SessionOptions {
  Role role = Role::kHost;
  // One of the transport registry's rows (transports.h); the names are ntprof::TransportName's.
  v1::Transport transport = v1::TRANSPORT_TCP;
  uint32_t sample_rate = 0;  // N: one command in N (1 = all)
  uint64_t salt = 0;
  // Host: only this namespace (nvme0n1) / local block device (loop0); empty = every namespace of
  // the transport.
  std::string device;
  // External BTF with the types of modules built without BTF (libbpf btf_custom_path).
  std::string btf_path;
  // Testing aid: try this attach type first for every hook that offers it ("kprobe", "raw_tp").
  std::string prefer_attach;
};

const char* RoleName(Role role);  // "host" / "target"
std::optional<Role> ParseRole(const std::string& s);
v1::Role ToProto(Role role);

}  // namespace ntprof::agent
