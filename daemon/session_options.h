// What a recording session is asked to do: the agent-side twin of a collector's StartSession.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ntprof::agent {

enum class Role { kHost, kTarget };
enum class Transport { kTcp, kRdma, kLocal };

struct SessionOptions {
  Role role = Role::kHost;
  Transport transport = Transport::kTcp;
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

const char* RoleName(Role role);            // "host" / "target"
const char* TransportName(Transport t);     // "tcp" / "rdma" / "local"
std::optional<Role> ParseRole(const std::string& s);
std::optional<Transport> ParseTransport(const std::string& s);

}  // namespace ntprof::agent
