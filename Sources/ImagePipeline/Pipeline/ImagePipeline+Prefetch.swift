/// Prefetching (`ImagePrefetcher`): work started as display would start it, at low priority.
extension ImagePipeline {
    /// Starts a prefetch: the image job for decoded strategies, the data job for
    /// `.encodedResponse` (whose bytes the data job stores once their header checks out).
    /// `done` runs when it ends, however it ends.
    func prefetch(_ request: ImageRequest, done: @escaping @Sendable () -> Void) -> JobSubscription {
        if configuration.strategy != .encodedResponse {
            return coordinator.subscribe(imageJob(for: request), priority: request.priority) { event in
                if case .finished = event { done() }
            }.subscription
        }
        return coordinator.subscribe(dataJob(for: request, staleInMemory: nil), priority: request.priority) { event in
            if case .finished = event { done() }
        }.subscription
    }

    /// What identifies a prefetch: the image job display would join.
    func prefetchKey(for request: ImageRequest) -> JobKey { imageJob(for: request).key }
}
