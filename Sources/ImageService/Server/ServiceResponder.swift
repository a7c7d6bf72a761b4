import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Turns Hummingbird requests into `ServiceRequest`s and `ServiceResponse`s back into
/// Hummingbird responses; the service's work runs in a task that is cancelled when the client
/// disconnects.
struct ServiceResponder: HTTPResponder {
    let service: ThumbnailService

    func respond(to request: Request, context: ServiceRequestContext) async throws -> Response {
        // A GET or HEAD carries no body; one that announces one is refused, and its connection
        // closed (DisconnectWatcher also closes it once an unannounced body passes 64 KiB).
        if request.method == .get || request.method == .head,
            request.headers[.transferEncoding] != nil || (request.headers[.contentLength].flatMap(Int.init) ?? 0) > 0
        {
            var response = Self.response(.error(.badRequest("a GET or HEAD request carries no body")))
            response.headers[.connection] = "close"
            return response
        }
        let ifNoneMatch = request.headers[values: .ifNoneMatch]
        let accept = request.headers[values: .accept]
        let serviceRequest = ServiceRequest(
            method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
            ifNoneMatch: ifNoneMatch.isEmpty ? nil : ifNoneMatch.joined(separator: ", "),
            accept: accept.isEmpty ? nil : accept.joined(separator: ", "))
        let work = Task { [service] in await service.respond(to: serviceRequest) }
        let connection = await DisconnectWatcher.connection(of: context.channel)
        let token = connection?.onClose { work.cancel() }
        let answer = await withTaskCancellationHandler {
            await work.value
        } onCancel: {
            work.cancel()
        }
        connection?.remove(token)
        return Self.response(answer, window: await ConnectionDeadlines.window(of: context.channel))
    }

    static func response(_ answer: ServiceResponse, window: OutboundWindow? = nil) -> Response {
        var fields = HTTPFields()
        for (name, value) in answer.headers {
            guard let field = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: field, value: value))
        }
        var response = Response(
            status: HTTPResponse.Status(code: answer.status), headers: fields, body: body(answer.body, window: window))
        // A 304 carries no length: one would have to be the 200's (RFC 9110 §8.6).
        if answer.status == 304 { response.headers[.contentLength] = nil }
        return response
    }

    /// Bytes handed to the connection at a time.
    static let sliceBytes = 64 << 10

    /// `body` written a slice at a time, each copied into a buffer of its own as the connection
    /// takes it: the writer waits for room in the connection's `window` (the bytes it holds and
    /// has not written to the socket), so an answer being written holds its own bytes —
    /// charged to the memory budget, shared with the result cache — and a window's worth more,
    /// whatever its size and however slowly it is read. The bytes (and their charge) go as soon
    /// as the last slice is handed over, or the connection closes and the write fails (a client
    /// that stops reading meets the write deadline). A body of one slice or less goes as one
    /// buffer, which Hummingbird writes with the head in one flush: a slice fits in any window,
    /// and the writer's round trips cost a typical thumbnail two more syscalls.
    static func body(_ body: Data, window: OutboundWindow?) -> ResponseBody {
        guard !body.isEmpty else { return ResponseBody() }
        guard body.count > sliceBytes else { return ResponseBody(byteBuffer: ByteBuffer(bytes: body)) } // small: one slice
        return ResponseBody(contentLength: body.count) { writer in
            var offset = body.startIndex
            while offset < body.endIndex {
                await window?.waitForRoom()
                let end = min(offset + sliceBytes, body.endIndex)
                window?.handedOver(end - offset)
                try await writer.write(ByteBuffer(bytes: body[offset..<end])) // small: one slice
                offset = end
            }
            try await writer.finish(nil)
        }
    }
}
