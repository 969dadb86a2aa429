// Compiled with one of the flags ncclz needs missing: ncclz.cuh must name the flag first.
#include <ncclz/ncclz.cuh>

int main() { return 0; }
