// CollectorLink: the agent's one Connect stream to its collector (collector.proto's contract). It
// dials, says hello, drops from the spool what the Welcome says is held, replays the rest in
// order, then sends each message as the spool gets it; acks trim the spool; StartRecording and
// StopRecording go to the control callback. A broken stream is redialed with backoff (0.2 s
// doubling to 5 s); nothing is lost meanwhile, the spool holds it.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "ntprof/v1/collector.grpc.pb.h"
#include "spool.h"

namespace ntprof::agent {

class CollectorLink {
 public:
  // A fresh hello for every connect (the sessions being recorded change).
  using HelloFn = std::function<v1::AgentHello()>;
  using ControlFn = std::function<void(const v1::CollectorMessage&)>;

  CollectorLink(std::string address, std::shared_ptr<grpc::Channel> channel, Spool* spool,
                HelloFn hello, ControlFn control);
  ~CollectorLink();  // Stop()

  void Start();
  void Stop();
  bool connected() const { return connected_.load(); }
  const std::string& address() const { return address_; }

 private:
  void Loop();
  // One stream from dial to break; returns whether the collector welcomed us.
  bool RunStream();

  std::string address_;
  std::shared_ptr<grpc::Channel> channel_;
  Spool* spool_;
  HelloFn hello_;
  ControlFn control_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> connected_{false};
  std::mutex mu_;  // guards context_ (Stop cancels the call in flight)
  std::condition_variable cv_;
  grpc::ClientContext* context_ = nullptr;
};

}  // namespace ntprof::agent
