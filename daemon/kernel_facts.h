// What the running kernel offers to BPF, asked one question at a time so that the HookPlan can be
// decided (and unit-tested) apart from the kernel. LiveKernelFacts answers from /sys, /proc, tracefs,
// BTF and a trial load; tests use a fake.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "symbol_column.h"

struct btf;

namespace ntprof::agent {

// Whether a kind of attachment works at all here, and if not, why.
struct Support {
  bool ok = false;
  std::string why;  // set when !ok
};

class KernelFacts {
 public:
  virtual ~KernelFacts() = default;
  // module "" is the kernel image: always loaded; its BTF is /sys/kernel/btf/vmlinux.
  virtual bool ModuleLoaded(const std::string& module) const = 0;
  virtual bool HasBtf(const std::string& module) const = 0;
  virtual bool FunctionInBtf(const std::string& module, const std::string& function) const = 0;
  virtual bool TracepointExists(const std::string& category, const std::string& name) const = 0;
  // tp_btf needs the tracepoint's btf_trace_<name> type in the BTF of its module.
  virtual bool TracepointInBtf(const std::string& module, const std::string& name) const = 0;
  // In available_filter_functions: kprobes (and trampolines) can attach.
  virtual bool FunctionTraceable(const std::string& function) const = 0;
  virtual bool FunctionInKallsyms(const std::string& function) const = 0;
  // A kernel symbol's address from kallsyms; 0 when absent or hidden (kptr_restrict, no
  // CAP_SYSLOG).
  virtual uint64_t SymbolAddress(const std::string& name) const = 0;
  virtual Support Fentry() const = 0;
  virtual Support Kprobes() const = 0;
};

class LiveKernelFacts : public KernelFacts {
 public:
  LiveKernelFacts();
  ~LiveKernelFacts() override;

  bool ModuleLoaded(const std::string& module) const override;
  bool HasBtf(const std::string& module) const override;
  bool FunctionInBtf(const std::string& module, const std::string& function) const override;
  bool TracepointExists(const std::string& category, const std::string& name) const override;
  bool TracepointInBtf(const std::string& module, const std::string& name) const override;
  bool FunctionTraceable(const std::string& function) const override;
  bool FunctionInKallsyms(const std::string& function) const override;
  uint64_t SymbolAddress(const std::string& name) const override;
  Support Fentry() const override;
  Support Kprobes() const override;

 private:
  struct btf* Btf(const std::string& module) const;
  const SymbolColumn& FilterFunctions() const;
  const SymbolColumn& Kallsyms() const;

  std::string tracefs_;  // "" when tracefs is not mounted
  mutable std::map<std::string, struct btf*> btf_;  // nullptr cached for "no BTF"
  mutable std::optional<SymbolColumn> filter_functions_;
  mutable std::optional<SymbolColumn> kallsyms_;
  mutable std::optional<Support> fentry_;
};

}  // namespace ntprof::agent
