#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open files (`RLIMIT_NOFILE`). `serve` needs one descriptor per client
/// connection, download and cache file at once: systemd's default soft limit (1024) is below the
/// default `--max-connections` (2048), and a server past its limit stops accepting anyone,
/// `/health` included. The soft limit can be raised up to the hard one without privileges.
enum FileDescriptorLimit {
    /// Raises the soft limit to at least `needed` where the hard limit allows; the limits after.
    static func raise(toAtLeast needed: Int) -> (soft: Int, hard: Int) {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return (.max, .max) }
        let wanted = rlim_t(max(0, needed))
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = min(limit.rlim_max, wanted)
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return (Int(clamping: limit.rlim_cur), Int(clamping: limit.rlim_max))
    }
}
