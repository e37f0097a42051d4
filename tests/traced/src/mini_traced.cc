// The tests' stand-in for traced: the tracing service behind Perfetto's producer and
// consumer sockets. Only the SDK's declarations are compiled here (build.rs extracts them
// from the amalgamated source); the service and its IPC host are linked from the SDK
// archive that perfetto-sdk-sys built, the same one the layer links.
#include "perfetto_declarations.h"

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
