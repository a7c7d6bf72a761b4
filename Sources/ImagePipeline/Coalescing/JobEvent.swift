/// What a shared job tells each subscriber: progress any number of times, then its result once.
enum JobEvent<Value: Sendable>: Sendable {
    case progress(received: Int, expected: Int?)
    case finished(Result<Value, ImagePipelineError>)
}
