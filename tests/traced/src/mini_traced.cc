// The tests' stand-in for traced: the tracing service behind Perfetto's producer and
// consumer sockets. The SDK's amalgamated source holds the service and its IPC host (the
// in-process backend uses the former), so one include gives everything traced runs.
#include "perfetto_c.cc"

extern "C" int utrace_mini_traced(const char* producer_socket, const char* consumer_socket) {
  perfetto::base::UnixTaskRunner task_runner;
  std::unique_ptr<perfetto::ServiceIPCHost> host =
      perfetto::ServiceIPCHost::CreateInstance(&task_runner);
  if (!host->Start(producer_socket, consumer_socket)) {
    return 1;
  }
  task_runner.Run();
  return 0;
}
