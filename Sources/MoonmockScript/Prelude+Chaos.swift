extension Prelude {
    /// `mock.chaos` and `mock.chaos_profile`: settings checked by the host (``ChaosPolicy``),
    /// handed to the engine when the script has loaded.
    static let chaosSource = #"""

-- errors, latency, faults and rate limits: on everything, a path prefix or a host (path =, host =)
function mock.chaos(settings)
  check_type(settings, "table", "mock.chaos settings")
  local ok, err = H.chaos(settings)
  if not ok then fail("mock.chaos: " .. err) end
end

-- chaos settings kept under a name, switched on over the admin API (PUT /__moonmock/chaos)
function mock.chaos_profile(name, settings)
  check_type(name, "string", "mock.chaos_profile name")
  check_type(settings, "table", "mock.chaos_profile settings")
  local ok, err = H.chaos_profile(name, settings)
  if not ok then fail("mock.chaos_profile: " .. err) end
end

"""#
}
