// ncclz.cuh compiled by the host C++ compiler: it must say that it needs nvcc.
#include <ncclz/ncclz.cuh>

int main() { return 0; }
