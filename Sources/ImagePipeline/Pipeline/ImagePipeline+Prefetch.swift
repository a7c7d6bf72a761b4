/// Prefetching (`ImagePrefetcher`): work started as display would start it, at low priority.
extension ImagePipeline {
    /// Starts a prefetch: the image job for decoded strategies, the data job for
    /// `.encodedResponse` (whose bytes the data job stores once their header checks out).
    /// `done` runs when it ends, however it ends.
    func prefetch(_ request: ImageRequest, done: @escaping @Sendable () -> Void) -> JobSubscription {
        if configuration.strategy != .encodedResponse {
            return imageJobs.subscribe(
                imageJobKey(for: request), priority: request.priority,
                operation: { [self] job throws(ImagePipelineError) in try await loadImage(request, job: job) },
                handler: { event in if case .finished = event { done() } }
            ).subscription
        }
        let key = DataJobKey(dataKey: request.dataKey, policy: request.cachePolicy, memoryValidators: nil)
        return dataJobs.subscribe(
            key, priority: request.priority,
            operation: { [self] job throws(ImagePipelineError) in try await loadOriginal(request, key: key, job: job) },
            handler: { event in if case .finished = event { done() } }
        ).subscription
    }
}
