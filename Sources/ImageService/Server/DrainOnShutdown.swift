import ServiceLifecycle

/// The first thing a graceful shutdown does: the service starts draining (`/ready` and new
/// image requests answer 503) before the listener closes and in-flight requests finish.
struct DrainOnShutdown: Service {
    let service: ThumbnailService

    func run() async throws {
        // Returns when graceful shutdown begins (or throws when the group is cancelled).
        try? await gracefulShutdown()
        service.startDraining()
    }
}
