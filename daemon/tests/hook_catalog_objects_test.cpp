// The hook catalog and the BPF objects agree both ways: every program a hook's variants name is in
// the object of its role and transport, and every program of an object belongs to one of those
// hooks. The skeletons are opened, not loaded: no root, no BPF needed.
#include <bpf/libbpf.h>

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "bpf_object_handle.h"
#include "hook_catalog.h"

namespace ntprof::agent {
namespace {

struct Case {
  Role role;
  Transport transport;
  const char* what;
};

constexpr Case kCases[] = {
    {Role::kHost, Transport::kTcp, "host tcp"},     {Role::kTarget, Transport::kTcp, "target tcp"},
    {Role::kHost, Transport::kRdma, "host rdma"},   {Role::kTarget, Transport::kRdma, "target rdma"},
    {Role::kHost, Transport::kLocal, "host local"},
};

std::set<std::string> CatalogPrograms(Role role, Transport transport) {
  std::set<std::string> out;
  for (const HookSpec& hook : HooksFor(role, transport)) {
    for (AttachType type : hook.variants) {
      for (const std::string& program : VariantPrograms(hook, type)) out.insert(program);
    }
  }
  return out;
}

std::set<std::string> ObjectPrograms(BpfObjectHandle& object) {
  std::set<std::string> out;
  struct bpf_program* program;
  bpf_object__for_each_program(program, object.object()) out.insert(bpf_program__name(program));
  return out;
}

TEST_CASE("every_hook_program_is_in_its_object_and_every_object_program_has_a_hook") {
  for (const Case& c : kCases) {
    INFO(c.what);
    auto object = OpenBpfObject(c.role, c.transport, "");
    REQUIRE(object.ok());
    const std::set<std::string> catalog = CatalogPrograms(c.role, c.transport);
    const std::set<std::string> programs = ObjectPrograms(**object);
    REQUIRE_FALSE(catalog.empty());
    for (const std::string& p : catalog) {
      INFO("named by the catalog: " << p);
      CHECK(programs.count(p) == 1);
    }
    for (const std::string& p : programs) {
      INFO("in the object: " << p);
      CHECK(catalog.count(p) == 1);
    }
  }
}

}  // namespace
}  // namespace ntprof::agent
