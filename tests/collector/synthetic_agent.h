// A stand-in for ntprofd on the collector's agent stream (collector.proto's contract): it spools
// messages with sequence numbers, sends them, keeps them until acked, and after a reconnect drops
// what the Welcome says is held and replays the rest. It replays .ntp recordings as a session's
// records, so a test knows exactly which records went in.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ntprof/v1/collector.grpc.pb.h"
#include "recording_messages.h"

namespace ntprof::testing {

class SyntheticAgent {
 public:
  SyntheticAgent(std::string hostname, v1::Role role, uint64_t epoch = 7) {
    hello_.set_hostname(std::move(hostname));
    hello_.set_role(role);
    hello_.set_transport(v1::TRANSPORT_TCP);
    hello_.set_agent_version("synthetic");
    hello_.set_stream_epoch(epoch);
  }
  ~SyntheticAgent() { Disconnect(); }

  // Queues a message under the next sequence number.
  void Spool(v1::AgentMessage message) {
    std::lock_guard lock(mu_);
    message.set_seq(++last_seq_);
    spool_.push_back(std::move(message));
  }

  // The recording's messages (see RecordingMessages), spooled in order.
  void SpoolRecording(const std::string& path) {
    for (auto& m : RecordingMessages(path)) Spool(std::move(m));
  }

  // Hello, Welcome (drops what the collector holds), then a reader thread for acks and control.
  bool Connect(std::shared_ptr<grpc::Channel> channel) {
    Disconnect();
    stub_ = v1::Collector::NewStub(channel);
    context_ = std::make_unique<grpc::ClientContext>();
    stream_ = stub_->Connect(context_.get());
    v1::AgentMessage hello;
    *hello.mutable_hello() = hello_;
    v1::CollectorMessage welcome;
    if (!stream_->Write(hello) || !stream_->Read(&welcome) || !welcome.has_welcome()) {
      context_->TryCancel();
      last_error_ = stream_->Finish().error_message();
      stream_.reset();
      return false;
    }
    Acked(welcome.welcome().acked_seq());
    welcome_acked_ = welcome.welcome().acked_seq();
    reader_ = std::thread([this] {
      v1::CollectorMessage m;
      while (stream_->Read(&m)) {
        if (m.has_ack()) {
          Acked(m.ack().seq());
        } else {
          std::lock_guard lock(mu_);
          control_.push_back(m);
          cv_.notify_all();
        }
      }
    });
    return true;
  }

  // Sends every spooled message (after a reconnect: every unacked one, again).
  bool SendAll() {
    std::vector<v1::AgentMessage> unsent;
    {
      std::lock_guard lock(mu_);
      unsent.assign(spool_.begin(), spool_.end());
    }
    for (const auto& m : unsent) {
      if (!stream_->Write(m)) return false;
    }
    return true;
  }

  bool WaitAcked(uint64_t seq, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return acked_ >= seq; });
  }
  bool WaitControl(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return control_.size() >= n; });
  }

  void Disconnect() {
    if (stream_) {
      stream_->WritesDone();
      context_->TryCancel();
      if (reader_.joinable()) reader_.join();
      (void)stream_->Finish();
      stream_.reset();
    }
  }

  uint64_t last_seq() const {
    std::lock_guard lock(mu_);
    return last_seq_;
  }
  uint64_t acked() const {
    std::lock_guard lock(mu_);
    return acked_;
  }
  uint64_t welcome_acked() const { return welcome_acked_; }
  const std::string& last_error() const { return last_error_; }
  std::vector<v1::CollectorMessage> control() const {
    std::lock_guard lock(mu_);
    return control_;
  }

 private:
  void Acked(uint64_t seq) {
    std::lock_guard lock(mu_);
    acked_ = std::max(acked_, seq);
    while (!spool_.empty() && spool_.front().seq() <= acked_) spool_.pop_front();
    cv_.notify_all();
  }

  v1::AgentHello hello_;
  std::unique_ptr<v1::Collector::Stub> stub_;
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::CollectorMessage>> stream_;
  std::thread reader_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<v1::AgentMessage> spool_;
  std::vector<v1::CollectorMessage> control_;
  uint64_t last_seq_ = 0;
  uint64_t acked_ = 0;
  uint64_t welcome_acked_ = 0;
  std::string last_error_;
};

}  // namespace ntprof::testing
