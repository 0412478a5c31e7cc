package io.rdmaactors.cluster;

import com.typesafe.config.Config;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.event.EventStream;
import org.apache.pekko.remote.FailureDetector;
import org.apache.pekko.remote.FailureDetectorWithAddress;
import org.apache.pekko.remote.PhiAccrualFailureDetector;

/**
 * The cluster's failure detector, with the tests' word added: a member (its {@code puppet-observer}
 * in the detector's configuration) sees another unreachable while their pair is in {@link #CUT},
 * whatever the heartbeats, so a test partitions the cluster's view and leaves the RDMA side alone.
 * Otherwise Pekko's own detector decides, so a member that stopped is still seen gone.
 */
public final class PuppetFailureDetector implements FailureDetector, FailureDetectorWithAddress {

    /** "observer monitored-address" pairs the observer sees unreachable. */
    static final Set<String> CUT = ConcurrentHashMap.newKeySet();

    private final String observer;
    private final PhiAccrualFailureDetector heartbeats;
    private volatile String monitored = "";

    public PuppetFailureDetector(Config config, EventStream events) {
        this.observer = config.getString("puppet-observer");
        this.heartbeats = new PhiAccrualFailureDetector(config, events);
    }

    static String pair(String observer, Object monitored) {
        return observer + " " + monitored;
    }

    /** The monitored member's address may come with more (its uid): a cut names the address. */
    @Override
    public boolean isAvailable() {
        String prefix = observer + " ";
        return heartbeats.isAvailable()
                && CUT.stream().noneMatch(p -> p.startsWith(prefix) && monitored.contains(p.substring(prefix.length())));
    }

    @Override
    public boolean isMonitoring() {
        return heartbeats.isMonitoring();
    }

    @Override
    public void heartbeat() {
        heartbeats.heartbeat();
    }

    @Override
    public void setAddress(String address) {
        monitored = address;
    }
}
