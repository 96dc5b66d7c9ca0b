# Homebrew formula for the moonmock command line, built from a release tarball with the Swift
# toolchain of Xcode (or the Command Line Tools). Lua 5.4.8 is built from the sources in the
# tarball (Sources/CLuaVendored); OpenSSL, libyaml and hiredis come from Homebrew.
#   brew install --build-from-source packaging/homebrew/moonmock.rb
# Not yet run on a Mac: docs/apple.md says what is verified where.
class Moonmock < Formula
  desc "Scriptable HTTP mocking server: mocks are Lua 5.4 scripts"
  homepage "https://github.com/moonmock/moonmock"
  url "https://github.com/moonmock/moonmock/archive/refs/tags/v0.1.0.tar.gz"
  # Fill in with `shasum -a 256` of the release tarball when a release is tagged.
  sha256 "0000000000000000000000000000000000000000000000000000000000000000"
  license "MIT"

  depends_on "pkg-config" => :build
  depends_on xcode: ["16.0", :build]
  depends_on "hiredis"
  depends_on "libyaml"
  depends_on "openssl@3"
  depends_on macos: :monterey

  def install
    ENV.prepend_path "PKG_CONFIG_PATH", Formula["openssl@3"].opt_lib/"pkgconfig"
    ENV.append "CPATH", "#{Formula["openssl@3"].opt_include}:#{HOMEBREW_PREFIX}/include"
    ENV.append "LIBRARY_PATH", "#{Formula["openssl@3"].opt_lib}:#{HOMEBREW_PREFIX}/lib"
    system "swift", "build", "--disable-sandbox", "-c", "release", "--product", "moonmock"
    bin.install ".build/release/moonmock"
    pkgshare.install "examples", "types"
  end

  test do
    assert_match "moonmock", shell_output("#{bin}/moonmock version")
    port = free_port
    pid = fork { exec bin/"moonmock", "serve", pkgshare/"examples/mocks.lua", "--port", port.to_s, "--no-watch" }
    sleep 2
    assert_match "\"poller\":\"kqueue\"", shell_output("curl -s http://127.0.0.1:#{port}/__moonmock/health")
    assert_equal "{\"id\":7,\"name\":\"User 7\"}", shell_output("curl -s http://127.0.0.1:#{port}/users/7")
  ensure
    Process.kill("TERM", pid) if pid
  end
end
