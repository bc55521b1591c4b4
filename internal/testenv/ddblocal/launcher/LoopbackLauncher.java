import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;

import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * Runs DynamoDB Local (its command-line arguments, as DynamoDBLocal.jar takes them) listening on
 * 127.0.0.1 only. DynamoDB Local has no flag for the address, and its Jetty server listens on every
 * interface; this launcher builds the server as DynamoDBLocal.jar's own main does, sets each
 * connector's host before the server starts, and checks the bound address afterwards.
 *
 * <p>Any failure (a DynamoDB Local whose internals changed, a connector of another kind, a socket
 * that is not on loopback) ends the process with status 1 and says why: it never falls back to
 * listening on every interface.
 */
public class LoopbackLauncher {
    static final String HOST = "127.0.0.1";

    public static void main(String[] args) {
        Server jetty;
        try {
            DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
            jetty = jettyOf(proxy);
            bindLoopback(jetty);
            proxy.start();
            checkLoopback(jetty);
        } catch (Throwable t) {
            fail("cannot run DynamoDB Local on " + HOST + " only: " + t);
            return;
        }
        try {
            jetty.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** jettyOf reads the proxy's private Jetty server: DynamoDB Local exposes no other way to it. */
    static Server jettyOf(DynamoDBProxyServer proxy) throws ReflectiveOperationException {
        Field f = DynamoDBProxyServer.class.getDeclaredField("server");
        f.setAccessible(true);
        Object s = f.get(proxy);
        if (!(s instanceof Server)) {
            throw new IllegalStateException("DynamoDBProxyServer.server is " + s + ", not a Jetty Server");
        }
        return (Server) s;
    }

    /** bindLoopback sets every connector's host; it must run before the server opens them. */
    static void bindLoopback(Server jetty) {
        Connector[] cs = jetty.getConnectors();
        if (cs == null || cs.length == 0) {
            throw new IllegalStateException("the Jetty server has no connectors");
        }
        for (Connector c : cs) {
            if (!(c instanceof ServerConnector)) {
                throw new IllegalStateException("connector " + c + " is not a ServerConnector");
            }
            ((ServerConnector) c).setHost(HOST);
        }
    }

    /**
     * checkLoopback fails unless the server started and every connector's socket is bound to a
     * loopback address. DynamoDBProxyServer.start prints and swallows some bind errors, so a
     * started server is not taken for granted.
     */
    static void checkLoopback(Server jetty) throws java.io.IOException {
        if (!jetty.isStarted()) {
            throw new IllegalStateException("the Jetty server is not running (port in use?)");
        }
        for (Connector c : jetty.getConnectors()) {
            Object t = ((ServerConnector) c).getTransport();
            if (!(t instanceof ServerSocketChannel)) {
                throw new IllegalStateException("connector " + c + " has no open socket");
            }
            InetSocketAddress a = (InetSocketAddress) ((ServerSocketChannel) t).getLocalAddress();
            if (a == null || !a.getAddress().isLoopbackAddress()) {
                throw new IllegalStateException("connector " + c + " listens on " + a);
            }
        }
    }

    static void fail(String msg) {
        System.err.println("LoopbackLauncher: " + msg);
        System.exit(1);
    }
}
