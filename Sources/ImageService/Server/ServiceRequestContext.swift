import Hummingbird
import NIOCore

/// Hummingbird's per-request context, keeping the connection's channel so a request can be
/// cancelled when its client goes away.
struct ServiceRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        channel = source.channel
    }
}
