/* guard_scan.h — the guard-byte scan the device backends share (DESIGN.md:
 * Evaluation, "device buffers"). A device buffer has `guard` bytes of one
 * value before its data and a tail after it; after a call the backend reads
 * both back and asks where the first changed byte is, counted from the
 * data: negative before its start (the byte nearest the data is the one
 * reported), positive past its end. A guard that could not be read back
 * (allocation or copy failed) is KS_GUARD_UNREADABLE, which the executor
 * reports as a failure: an unreadable guard never passes. */
#ifndef KS_GUARD_SCAN_H
#define KS_GUARD_SCAN_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#define KS_GUARD_UNREADABLE LONG_MIN

/* The guard before the data: -(distance) of the changed byte nearest the
 * data, 0 if all n bytes are `byte`. */
static inline long ks_guard_scan_head(const unsigned char *g, size_t n,
                                      unsigned char byte) {
  for (size_t i = n; i-- > 0;)
    if (g[i] != byte)
      return (long)i - (long)n;
  return 0;
}

/* The guard after the data: 1 + the index of the first changed byte, 0 if
 * all n bytes are `byte`. */
static inline long ks_guard_scan_tail(const unsigned char *g, size_t n,
                                      unsigned char byte) {
  for (size_t i = 0; i < n; i++)
    if (g[i] != byte)
      return (long)i + 1;
  return 0;
}

/* The failure of a guard check of `what` ("output y", "the scratch
 * buffer") into buf, as the executor and the backends report it. */
static inline void ks_guard_reason(char *buf, size_t n, long off,
                                   const char *what) {
  if (off == KS_GUARD_UNREADABLE)
    snprintf(buf, n,
             "could not read back the device guard bytes of %s (checked "
             "calls fail closed)",
             what);
  else
    snprintf(buf, n, "wrote %s %s (device guard bytes changed at offset %+ld)",
             off > 0 ? "past the end of" : "before the start of", what, off);
}

#endif
