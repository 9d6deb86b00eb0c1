// bench_matcher: in progress
int main() { return 0; }
