import NIOCore
import NIOHTTP1

/// Notes whether the request head passing now is HTTP/1.0, for `DisconnectWatcher`: the
/// handlers after Hummingbird's codec see HTTPTypes requests, which carry no version, and an
/// HTTP/1.0 client must never be sent a 1xx interim response (RFC 9110 §15.2).
///
/// It sits where NIOHTTP1's parts still carry the version, after the pipelining handler, so it
/// sees heads in the order the watcher does.
final class RequestVersionSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// The last head read was HTTP/1.0 (or older). Event loop only.
    private(set) var lastHeadIsHTTP10 = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            lastHeadIsHTTP10 = head.version.major < 1 || (head.version.major == 1 && head.version.minor == 0)
        }
        context.fireChannelRead(data)
    }

    /// Adds `sniffer` to `pipeline` behind the HTTP/1 decoding handlers. Without them (or if
    /// adding it fails) no version is known, and the watcher treats every client as HTTP/1.1.
    static func install(_ sniffer: RequestVersionSniffer, in pipeline: ChannelPipeline.SynchronousOperations) {
        let after: (any ChannelHandler)? =
            (try? pipeline.handler(type: HTTPServerPipelineHandler.self))
            ?? (try? pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self))
        guard let after else { return }
        try? pipeline.addHandler(sniffer, position: .after(after))
    }
}
