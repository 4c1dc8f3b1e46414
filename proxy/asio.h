// The one place proxy/ includes Boost.Asio, with the C++20 coroutine pieces
// used by the listener (as in Asio's example/cpp20/coroutines).
//
// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>,
// so <utility> must come first.
//
// g++ 12 reports -Wmismatched-new-delete at the end of every coroutine
// function: a false positive on Asio 1.18's awaitable_frame_base, whose
// class-specific operator new/delete pair (thread-local frame recycling) it
// does not match up. It is silenced for translation units that include this
// header (they are the coroutine ones); remove when the project's g++ no
// longer reports it.
//
// Thread safety / lifetime: declarations only.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

namespace binrelay::proxy {
namespace asio = boost::asio;
using tcp = boost::asio::ip::tcp;
}  // namespace binrelay::proxy
