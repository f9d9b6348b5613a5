/* Compiled as C: the C interface headers are valid C, and the calls work
 * from C code (test_xios_c_api.cpp calls this). Returns 0 when every null
 * handle was refused with EP_ERR_ARGUMENT and a message naming the call. */
#include <string.h>

#include "ep/ep.h"
#include "xios_lite/xios_lite.h"

int c_api_refuses_null_handles(void) {
  int rank = -1;
  int64_t extents[2] = {1, 1};
  double value = 0.0;
  xios_lite_client_t client = NULL;
  int failures = 0;
  if (ep_comm_rank(NULL, &rank) != EP_ERR_ARGUMENT || !strstr(ep_last_error(), "ep_comm_rank")) {
    ++failures;
  }
  if (xios_lite_send_field(client, "f", &value, 2, extents) != EP_ERR_ARGUMENT ||
      !strstr(xios_lite_last_error(), "xios_lite_send_field")) {
    ++failures;
  }
  if (xios_lite_finalise(&client) != EP_ERR_ARGUMENT) {
    ++failures;
  }
  return failures;
}
