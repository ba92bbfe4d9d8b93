void f() {
#if A
  if (x) {
  }
}
#else
  }
}
#endif
#if B
  for (;;) {
#elif C
  while (1) {
#else
  do {
#endif
  }
