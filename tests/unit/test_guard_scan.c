/* test_guard_scan.c — the guard-byte scan of the device backends
 * (src/backend/guard_scan.h): offsets counted from the data, the byte
 * nearest the data reported, and an unreadable guard reported as a failure
 * with its own message. */
#include "backend/guard_scan.h"

#include <criterion/criterion.h>
#include <string.h>

Test(guard_scan, head_offset_is_the_changed_byte_nearest_the_data) {
  unsigned char g[64];
  memset(g, 0xFF, sizeof g);
  cr_assert_eq(ks_guard_scan_head(g, sizeof g, 0xFF), 0);
  g[10] = 0;
  cr_assert_eq(ks_guard_scan_head(g, sizeof g, 0xFF), 10 - 64);
  g[63] = 1; /* the byte just before the data wins */
  cr_assert_eq(ks_guard_scan_head(g, sizeof g, 0xFF), -1);
  cr_assert_eq(ks_guard_scan_head(g, 0, 0xFF), 0);
}

Test(guard_scan, tail_offset_counts_from_one_past_the_end) {
  unsigned char g[64];
  memset(g, 0xAB, sizeof g);
  cr_assert_eq(ks_guard_scan_tail(g, sizeof g, 0xAB), 0);
  g[40] = 0;
  cr_assert_eq(ks_guard_scan_tail(g, sizeof g, 0xAB), 41);
  g[0] = 0; /* the first byte past the end wins */
  cr_assert_eq(ks_guard_scan_tail(g, sizeof g, 0xAB), 1);
}

Test(guard_scan, reasons_name_the_buffer_and_fail_closed) {
  char r[256];
  ks_guard_reason(r, sizeof r, 4, "output y");
  cr_assert(strstr(r, "past the end of output y"), "%s", r);
  cr_assert(strstr(r, "+4"), "%s", r);
  ks_guard_reason(r, sizeof r, -2, "the scratch buffer");
  cr_assert(strstr(r, "before the start of the scratch buffer"), "%s", r);
  ks_guard_reason(r, sizeof r, KS_GUARD_UNREADABLE, "input x");
  cr_assert(strstr(r, "could not read back") && strstr(r, "input x"), "%s", r);
  cr_assert_eq(KS_GUARD_UNREADABLE != 0, 1); /* callers test `if (off)` */
}
