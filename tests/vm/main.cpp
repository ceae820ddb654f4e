// The vm suite's main: doctest's, then the guest's framecld stopped, which must exit
// cleanly as after every integration test. It outlives the test cases, so its stop is
// checked here rather than by a doctest check.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>

#include "guest_daemon.hpp"

int main(int argc, char** argv)
{
    doctest::Context context(argc, argv);
    const int failed = context.run();
    const std::string stop_problem = framecl::test::stopGuestDaemon();
    if (!stop_problem.empty()) {
        std::cerr << stop_problem << "\n";
        return 1;
    }
    return failed;
}
