#include "workload_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>

namespace ntprof::cli {
namespace {

std::atomic<int> caught{0};
std::atomic<pid_t> workload{0};

void OnStopSignal(int sig, siginfo_t* info, void*) {
  caught.store(sig);
  const pid_t child = workload.load();
  // SI_KERNEL: the terminal's signal to the foreground group, which the workload has already got.
  if (child > 0 && info->si_code != SI_KERNEL) ::kill(child, sig);
}

}  // namespace

void CatchStopSignals() {
  struct sigaction action {};
  action.sa_sigaction = OnStopSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &action, nullptr);
}

int CaughtStopSignal() { return caught.load(); }

int RunWorkload(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  const pid_t child = ::fork();
  if (child < 0) {
    std::cerr << "ntprofctl run: cannot start " << command.front() << ": " << std::strerror(errno)
              << "\n";
    return 126;
  }
  if (child == 0) {
    // exec resets caught signals to their defaults; the child's own handlers are its business.
    ::execvp(argv[0], argv.data());
    const int why = errno;
    std::cerr << "ntprofctl run: cannot run " << command.front() << ": " << std::strerror(why)
              << "\n";
    ::_exit(why == ENOENT ? 127 : 126);
  }
  workload.store(child);
  // A signal caught between the fork and the store above has not reached the workload yet.
  if (const int sig = caught.load(); sig != 0) ::kill(child, sig);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  workload.store(0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace ntprof::cli
