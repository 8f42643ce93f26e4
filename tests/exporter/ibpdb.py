# SPDX-License-Identifier: MIT
"""Build real ibpulse SQLite databases for the exporter's tests and bench.

The schema comes from schema/*.sql, applied in order exactly as the
collector does (PRAGMA user_version = NNN after each file), in WAL mode.
Rows are inserted with plain SQL: the exporter reads them as it would read
what the collector wrote.
"""
import os
import re
import sqlite3
import time


def create(path, schema_dir):
    """Create the database at path with every schema file applied."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    files = sorted(f for f in os.listdir(schema_dir) if re.match(r"\d+_.*\.sql$", f))
    for f in files:
        with open(os.path.join(schema_dir, f)) as fh:
            db.executescript(fh.read())
        db.execute("PRAGMA user_version = %d" % int(f.split("_")[0]))
    return db


def mark_changed(db, host_id):
    """What the collector does in the transaction that changes a host's
    device, port, GID, P_Key or series rows (schema 008): a fresh change
    marker, so that the exporter's block cache reads the host again."""
    seq = db.execute("UPDATE change_seq SET seq = seq + 1 RETURNING seq").fetchone()[0]
    db.execute("INSERT INTO host_change (host_id, seq) VALUES (?, ?) ON CONFLICT (host_id)"
               " DO UPDATE SET seq = excluded.seq", (host_id, seq))
    return seq


def add_host(db, name, last_report=None, probe_version="0.1.0"):
    now = time.time()
    last_report = now if last_report is None else last_report
    cur = db.execute(
        "INSERT INTO host (name, first_seen, last_report, probe_timestamp,"
        " probe_version) VALUES (?, ?, ?, ?, ?)",
        (name, last_report - 3600, last_report, last_report, probe_version))
    return cur.lastrowid


def add_device(db, host_id, name, **kw):
    cols = {
        "node_guid": "0002:c903:0010:1234", "sys_image_guid": "0002:c903:0010:1237",
        "fw_ver": "20.31.1014", "hca_type": "MT4123", "board_id": "MT_0000000223",
        "node_desc": "node mlx5_0", "numa_node": 0, "netdevs": None,
        "pcie_address": "0000:3b:00.0", "pcie_cur_speed_gts": 16.0,
        "pcie_max_speed_gts": 16.0, "pcie_cur_width": 16, "pcie_max_width": 16,
        "aer_correctable": 0, "aer_nonfatal": 0, "aer_fatal": 0,
    }
    cols.update(kw)
    names = ", ".join(cols)
    marks = ", ".join("?" for _ in cols)
    cur = db.execute(
        "INSERT INTO device (host_id, name, %s, updated) VALUES (?, ?, %s, ?)"
        % (names, marks), (host_id, name, *cols.values(), time.time()))
    return cur.lastrowid


def add_port(db, host_id, device_id, port, **kw):
    cols = {
        "state": 4, "phys_state": 5, "rate_bytes": 25000000000,
        "link_layer": "InfiniBand", "lid": 3, "sm_lid": 1, "lmc": 0,
        "cap_mask": 0x2651e848, "port_guid": "0002:c903:0010:1235", "netdev": None,
    }
    cols.update(kw)
    names = ", ".join(cols)
    marks = ", ".join("?" for _ in cols)
    cur = db.execute(
        "INSERT INTO port (host_id, device_id, port, %s, updated)"
        " VALUES (?, ?, ?, %s, ?)" % (names, marks),
        (host_id, device_id, port, *cols.values(), time.time()))
    return cur.lastrowid


def add_counters(db, port_id, source, counters):
    """counters: {name: raw value}; source 0 ib, 1 hw, 2 net."""
    now = time.time()
    db.executemany(
        "INSERT INTO series (port_id, source, name, value, changed)"
        " VALUES (?, ?, ?, ?, ?)",
        [(port_id, source, n, _i64(v), now) for n, v in counters.items()])


def _i64(v):
    """The collector stores u64 counters as SQLite's signed 64-bit integer."""
    return v - (1 << 64) if v >= (1 << 63) else v


def add_gids(db, port_id, gids):
    """gids: [(index, gid, type, netdev)]"""
    db.executemany("INSERT INTO port_gid (port_id, idx, gid, type, netdev)"
                   " VALUES (?, ?, ?, ?, ?)", [(port_id, *g) for g in gids])


def add_pkeys(db, port_id, pkeys):
    """pkeys: [(index, pkey)]"""
    db.executemany("INSERT INTO port_pkey (port_id, idx, pkey) VALUES (?, ?, ?)",
                   [(port_id, *k) for k in pkeys])


# The counters of an mlx5-like IB port, raw as sysfs shows them (62 names).
IB_COUNTERS = [
    "port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets",
    "unicast_xmit_packets", "unicast_rcv_packets", "multicast_xmit_packets",
    "multicast_rcv_packets", "port_xmit_wait", "symbol_error",
    "link_error_recovery", "link_downed", "port_rcv_errors",
    "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
    "port_xmit_discards", "port_xmit_constraint_errors",
    "port_rcv_constraint_errors", "local_link_integrity_errors",
    "excessive_buffer_overrun_errors", "VL15_dropped",
]
HW_COUNTERS = [
    "duplicate_request", "implied_nak_seq_err", "local_ack_timeout_err",
    "out_of_buffer", "out_of_sequence", "packet_seq_err", "req_cqe_error",
    "req_cqe_flush_error", "req_remote_access_errors",
    "req_remote_invalid_request", "resp_cqe_error", "resp_cqe_flush_error",
    "resp_local_length_error", "resp_remote_access_errors", "rnr_nak_retry_err",
    "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart",
    "roce_slow_restart_cnps", "roce_slow_restart_trans", "rp_cnp_handled",
    "rp_cnp_ignored", "np_cnp_sent", "np_ecn_marked_roce_packets",
    "rx_atomic_requests", "rx_dct_connect", "rx_read_requests",
    "rx_write_requests", "rx_icrc_encapsulated", "resp_rnr_nak",
    "req_transport_retries_exceeded", "req_rnr_retries_exceeded",
    "rx_dct_connect_error", "roce_slow_restart_cnp_sent", "lifespan",
    "rdma_sends", "rdma_recvs", "duplicate_request_extra", "ack_deferred",
    "retry_exceeded_err", "retry_rnr_exceeded_err",
]


def add_probe(db, host, labels=None, ports=(("mlx5_0", 1, 4),), registered=None):
    """A registered probe (schema 002): labels {key: value}, ports
    [(device, port, state)]."""
    import json
    now = time.time()
    registered = now - 7200 if registered is None else registered
    labels = labels or {}
    cur = db.execute(
        "INSERT INTO probe (host, address, port, labels, profiles, registered,"
        " updated) VALUES (?, '127.0.0.1', 18515, ?, '[\"bw\",\"lat\"]', ?, ?)",
        (host, json.dumps(labels), registered, now))
    pid = cur.lastrowid
    db.executemany("INSERT INTO probe_label VALUES (?, ?, ?)",
                   [(pid, k, v) for k, v in labels.items()])
    db.executemany("INSERT INTO probe_port (probe_id, device, port, state, pkeys)"
                   " VALUES (?, ?, ?, ?, '[]')", [(pid, *p) for p in ports])
    return pid


_RESULT_SEQ = [0]


def add_result(db, host, device, port, peer, profile="bw", outcome="ok", busy=0,
               started=None, **figures):
    """A test result (schema 002): peer (host, device, port); figures by
    column name (bw_avg_bytes_per_second=..., lat_p99_seconds=...)."""
    now = time.time()
    _RESULT_SEQ[0] += 1
    cols = {"result_id": "it-%d-%f" % (_RESULT_SEQ[0], now), "host": host,
            "profile": profile, "test": "write_bw" if profile == "bw" else "write_lat",
            "started": now - 60 if started is None else started,
            "local_device": device, "local_port": port, "peer_host": peer[0],
            "peer_device": peer[1], "peer_port": peer[2], "outcome": outcome,
            "busy": busy, "received": now}
    cols.update(figures)
    db.execute("INSERT INTO result (%s) VALUES (%s)"
               % (", ".join(cols), ", ".join("?" for _ in cols)), tuple(cols.values()))


def add_link_state(db, a, b, metric="bandwidth", profile="bw", regression=None,
                   **cols):
    """A link's baseline state (schema 003): a and b are (host, device, port);
    regression: a dict of regression columns to open one for the link; cols
    are link_state columns (baseline=..., last_value=..., judged=...)."""
    now = time.time()
    row = {"a_host": a[0], "a_device": a[1], "a_port": a[2], "b_host": b[0],
           "b_device": b[1], "b_port": b[2], "profile": profile,
           "metric": metric, "last_started": now - 60, "updated": now}
    if regression is not None:
        reg = {"a_host": a[0], "a_device": a[1], "a_port": a[2],
               "b_host": b[0], "b_device": b[1], "b_port": b[2],
               "profile": profile, "metric": metric, "started": now - 600,
               "opened": now - 300, "baseline": cols.get("baseline", 0),
               "threshold": cols.get("threshold", 0),
               "baseline_source": "link", "figure": cols.get("last_value", 0),
               "worst": cols.get("last_value", 0),
               "last": cols.get("last_value", 0), "bad_results": 3,
               "results": 5, "updated": now}
        reg.update(regression)
        cur = db.execute("INSERT INTO regression (%s) VALUES (%s)"
                         % (", ".join(reg), ", ".join("?" for _ in reg)),
                         tuple(reg.values()))
        row["regression_id"] = cur.lastrowid
    row.update(cols)
    cur = db.execute("INSERT INTO link_state (%s) VALUES (%s)"
                     % (", ".join(row), ", ".join("?" for _ in row)),
                     tuple(row.values()))
    return cur.lastrowid
