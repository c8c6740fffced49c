// A small HTTP/1.0 server for Prometheus: GET /metrics returns the text exposition format. One
// connection at a time with short timeouts (a scrape is tiny and rare): a client that stalls while
// sending its request is dropped after two seconds, a response gets ten to leave, a request head
// over 8 KiB is answered 431. Speaks TLS when given a certificate, like every TCP listener; a
// plaintext request there is answered 400 with a hint to use https://.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "http_connection.h"
#include "listen_security.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace ntprof::collector {

struct HttpResponse {
  std::string status;  // "200 OK"
  std::string body;
  std::string type = "text/plain";
};

class MetricsHttpServer {
 public:
  using Body = std::function<std::string()>;

  MetricsHttpServer() = default;
  ~MetricsHttpServer() { Stop(); }
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // address: "host:port" (port 0 picks one, see port()).
  absl::Status Start(const std::string& address, const common::TlsFlags& flags,
                     const common::TlsMaterial& tls, Body body);
  void Stop();
  int port() const { return port_; }

 private:
  void Serve();
  void Handle(int fd);
  HttpResponse Answer(HttpConnection::HeadResult read, const std::string& head) const;

  Body body_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  int port_ = 0;
  SSL_CTX* ssl_ctx_ = nullptr;
  std::thread thread_;
};

}  // namespace ntprof::collector
