@testable import RepDaemon
import RepSettings
import Testing

@Suite("client admission")
struct AdmissionTests {
    static func options(uids: [UInt32], gids: [UInt32]) -> ServerOptions {
        var socket = SocketSettings()
        socket.allowedUIDs = uids
        socket.allowedGIDs = gids
        return ServerOptions(socket: socket, path: "/unused", ownUID: 1000)
    }

    @Test(
        "a peer whose credentials cannot be read is refused when an allow-list is set, admitted when none is",
        arguments: [([4242], [], false), ([], [4242], false), ([], [], true)] as [([UInt32], [UInt32], Bool)])
    func unreadableCredentials(uids: [UInt32], gids: [UInt32], admitted: Bool) {
        #expect(Self.options(uids: uids, gids: gids).admits(nil) == admitted)
    }

    @Test(
        "readable credentials are judged against the allow-lists",
        arguments: [
            (4242, 100, true), (0, 0, true), (1000, 1000, true), (65534, 65534, false), (65534, 4242, true),
        ] as [(UInt32, UInt32, Bool)])
    func readableCredentials(uid: UInt32, gid: UInt32, admitted: Bool) {
        let credentials = ClientHandler.PeerCredentials(pid: 1, uid: uid, gid: gid)
        #expect(Self.options(uids: [4242], gids: [4242]).admits(credentials) == admitted)
    }
}
