import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypesHTTP1
@testable import ImageService
import Testing

/// The watcher's probe, driven byte by byte through the HTTP/1 handlers `serve` runs, without a
/// socket: which clients are sent a `103` when their input ends while a request waits.
@Suite("Service: the disconnect watcher's probe")
struct DisconnectWatcherTests {
    /// A connection with Hummingbird's HTTP/1 handlers and the watcher, `request` read, then
    /// its input closed; what the server wrote back.
    private func written(after request: String) throws -> String {
        let channel = EmbeddedChannel()
        let pipeline = channel.pipeline.syncOperations
        try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: false)
        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
        try pipeline.addHandler(DisconnectWatcher())
        try channel.writeInbound(ByteBuffer(string: request))
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        var output = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { output += String(buffer: buffer) }
        _ = try channel.finish(acceptAlreadyClosed: true)
        return output
    }

    @Test("an HTTP/1.1 client whose input ends while its request waits is probed with a 103")
    func probesHTTP11() throws {
        let output = try written(after: "GET /w:10/x HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(output.hasPrefix("HTTP/1.1 103"), "\(output)")
    }

    @Test("an HTTP/1.0 client is never sent a 1xx answer (RFC 9110 §15.2)")
    func neverProbesHTTP10() throws {
        #expect(try written(after: "GET /w:10/x HTTP/1.0\r\nHost: a\r\n\r\n") == "")
        #expect(try written(after: "GET /w:10/x HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\n\r\n") == "")
    }
}
