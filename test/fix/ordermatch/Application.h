/* -*- C++ -*- */

/****************************************************************************
** Copyright (c) 2001-2014
**
** This file is part of the QuickFIX FIX Engine
**
** This file may be distributed under the terms of the quickfixengine.org
** license as defined by quickfixengine.org and appearing in the file
** LICENSE included in the packaging of this file.
**
** This file is provided AS IS with NO WARRANTY OF ANY KIND, INCLUDING THE
** WARRANTY OF DESIGN, MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE.
**
** See http://www.quickfixengine.org/LICENSE for licensing information.
**
** Contact ask@quickfixengine.org if any conditions of this licensing are
** not clear to you.
**
****************************************************************************/

/*
 * QuickFIX's ordermatch example (examples/ordermatch/Application.h and .cpp in QuickFIX 1.14/1.15, as
 * Debian's libquickfix-doc ships it), ported from FIX 4.2 to FIX 4.4 as a counterparty for the FIX
 * connector's tests: NewOrderSingle (limit and market; Day, GTC, GTD, IOC, FOK),
 * OrderCancelRequest and OrderCancelReplaceRequest, answered with FIX 4.4 ExecutionReports or
 * OrderCancelRejects; symbols outside the list given on the command line are rejected; a ClOrdID
 * received before is ignored; `repeat` sends an ExecutionReport again with the same ExecID.
 * The example's other files are taken from the package and changed by book.patch.
 */

#ifndef ORDERMATCH_APPLICATION_H
#define ORDERMATCH_APPLICATION_H

#include "IDGenerator.h"
#include "OrderMatcher.h"
#include "Order.h"
#include <queue>
#include <iostream>
#include <map>
#include <set>

#include "quickfix/Application.h"
#include "quickfix/MessageCracker.h"
#include "quickfix/Values.h"
#include "quickfix/Utility.h"
#include "quickfix/Mutex.h"

#include "quickfix/fix44/NewOrderSingle.h"
#include "quickfix/fix44/OrderCancelRequest.h"
#include "quickfix/fix44/OrderCancelReplaceRequest.h"

class Application
      : public FIX::Application,
        public FIX::MessageCracker
{
public:
  // symbols: the instruments the market trades (an order for another is rejected); empty: any.
  Application( const std::set < std::string > & symbols );

private:
  // Application overloads
  void onCreate( const FIX::SessionID& ) {}
  void onLogon( const FIX::SessionID& sessionID );
  void onLogout( const FIX::SessionID& sessionID );
  void toAdmin( FIX::Message&, const FIX::SessionID& ) {}
  void toApp( FIX::Message&, const FIX::SessionID& )
  throw( FIX::DoNotSend );
  void fromAdmin( const FIX::Message&, const FIX::SessionID& )
  throw( FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::RejectLogon ) {}
  void fromApp( const FIX::Message& message, const FIX::SessionID& sessionID )
  throw( FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::UnsupportedMessageType );

  // MessageCracker overloads
  void onMessage( const FIX44::NewOrderSingle&, const FIX::SessionID& );
  void onMessage( const FIX44::OrderCancelRequest&, const FIX::SessionID& );
  void onMessage( const FIX44::OrderCancelReplaceRequest&, const FIX::SessionID& );

  // Order functionality
  void processOrder( const Order&, char timeInForce );
  void match( const std::string& symbol );
  void cancelRest( const Order& order );

  void updateOrder( const Order&, char execType, char ordStatus,
                    const std::string& clOrdID = "", const std::string& origClOrdID = "" );
  void acceptOrder( const Order& order )
  { updateOrder( order, FIX::ExecType_NEW, FIX::OrdStatus_NEW ); }
  void fillOrder( const Order& order );
  void finish( const Order& order, char ordStatus );

  void rejectOrder( const FIX::SenderCompID&, const FIX::TargetCompID&,
                    const FIX::ClOrdID& clOrdID, const FIX::Symbol& symbol,
                    const FIX::Side& side, int ordRejReason, const std::string& message );
  void rejectRequest( const FIX::SenderCompID&, const FIX::TargetCompID&,
                      const FIX::ClOrdID& clOrdID, const FIX::OrigClOrdID& origClOrdID,
                      char responseTo, const Order* order, const std::string& message );
  bool repeated( const FIX::ClOrdID& clOrdID );

  // Type conversions
  Order::Side convert( const FIX::Side& );
  Order::Type convert( const FIX::OrdType& );
  FIX::Side convert( Order::Side );
  FIX::OrdType convert( Order::Type );

  OrderMatcher m_orderMatcher;
  IDGenerator m_generator;
  // Execution and order ids are unique across restarts of the process.
  std::string m_idPrefix;
  std::set < std::string > m_symbols;
  // Every ClOrdID received, and the orders no longer in the book (ClOrdID -> OrderID, OrdStatus).
  std::set < std::string > m_clOrdIDs;
  std::map < std::string, std::pair < std::string, char > > m_finished;
  // Each ExecutionReport as first sent, by ExecID.
  std::map < std::string, FIX::Message > m_sent;
  // The ExecID that repeat() is sending again as a resend.
  std::string m_possDupExecID;
  FIX::Mutex m_sentMutex;

public:
  const OrderMatcher& orderMatcher() { return m_orderMatcher; }
  // Sends the ExecutionReport that had ExecID execID again: a new message, or with possDup a copy
  // marked PossDupFlag (43) = Y with OrigSendingTime (122). False when no report had that ExecID.
  bool repeat( const std::string& execID, bool possDup );
};

#endif
