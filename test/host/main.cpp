// Catch2 (2.x, single header) supplies main() for the host test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
