// A user's schedule tag without its algorithm_for overload: the message names what is missing.
#include "ncclz/schedule/schedule.hpp"

namespace user {
struct Butterfly {
  static constexpr const char* name = "butterfly";
};
}  // namespace user

static_assert(ncclz::schedule::policy_check<user::Butterfly>::value);
